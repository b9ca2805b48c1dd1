use std::process::ExitCode;

use clap::Parser;
use harness::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Worker { lib, hash, memory, stack, cpu } = &cli.command {
        let schema_hash = u64::from_str_radix(hash, 16).unwrap_or(0);
        let code = harness::judge::worker::main(harness::judge::worker::WorkerArgs {
            lib,
            schema_hash,
            memory_bytes: *memory,
            stack_bytes: *stack,
            cpu_seconds: *cpu,
        });
        return ExitCode::from(code as u8);
    }
    if let Command::Measure { lib, hash, memory, stack, cpu } = &cli.command {
        let code = harness::judge::measure::main(harness::judge::measure::MeasureArgs {
            lib,
            schema_hash: u64::from_str_radix(hash, 16).unwrap_or(0),
            memory_bytes: *memory,
            stack_bytes: *stack,
            cpu_seconds: *cpu,
        });
        return ExitCode::from(code as u8);
    }
    match harness::cmd::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
