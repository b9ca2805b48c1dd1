use std::process::ExitCode;

use clap::Parser;
use harness::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Worker { lib, hash, memory, stack, cpu, timeout_ms, output, mode } = &cli.command {
        let schema_hash = u64::from_str_radix(hash, 16).unwrap_or(0);
        let code = harness::judge::worker::main(harness::judge::worker::WorkerArgs {
            lib,
            schema_hash,
            memory_bytes: *memory,
            stack_bytes: *stack,
            cpu_seconds: *cpu,
            case_timeout: std::time::Duration::from_millis(*timeout_ms),
            output_bytes: *output,
            fork_per_case: mode != "shared",
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
    // A panic anywhere ends the builds it would leave behind (workers die
    // with the threads that started them).
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        harness::judge::compile::stop_all_builds();
        previous(info);
    }));
    match harness::cmd::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
