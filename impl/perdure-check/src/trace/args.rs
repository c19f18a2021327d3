//! The options every `perdure trace <construction>` producer takes:
//! `--seed N --runs R --threads T --ops K --crash --tamper MODE`.

/// Parsed options; `tamper` is the mode's name, for the producer to map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunArgs {
    /// The first run's seed (0..=u64::MAX / 2).
    pub seed: u64,
    /// Runs in the trace (1..=1000).
    pub runs: u64,
    /// Threads (1..=the producer's limit).
    pub threads: usize,
    /// Operations per thread (1..=6).
    pub ops: u64,
    /// Take a full crash in every run.
    pub crash: bool,
    /// `--tamper MODE`, if given.
    pub tamper: Option<String>,
}

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// `--help`.
    Help,
    /// A trace with these options.
    Run(RunArgs),
}

/// Parses `args` (after the construction's name) over `defaults`;
/// `--threads` up to `max_threads`. A bad option is an error message.
pub fn parse_run_args(
    args: &[String],
    defaults: RunArgs,
    max_threads: u64,
) -> Result<Parsed, String> {
    let mut o = defaults;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |lo: u64, hi: u64| -> Result<u64, String> {
            let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
            match v.parse::<u64>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(format!("{a} needs an integer in {lo}..={hi}, not {v:?}")),
            }
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--seed" => o.seed = num(0, u64::MAX / 2)?,
            "--runs" => o.runs = num(1, 1000)?,
            "--threads" => o.threads = num(1, max_threads)? as usize,
            "--ops" => o.ops = num(1, 6)?,
            "--crash" => o.crash = true,
            "--tamper" => match it.next() {
                Some(m) => o.tamper = Some(m.clone()),
                None => return Err("--tamper needs a mode".into()),
            },
            s => return Err(format!("unknown argument {s:?}")),
        }
    }
    Ok(Parsed::Run(o))
}

/// [`parse_run_args`] for `perdure trace CMD`: prints `help` for
/// `--help` (exit 0) or the error and a pointer to the help (exit 2), or
/// returns the options.
pub fn run_args_or_exit(
    cmd: &str,
    args: &[String],
    defaults: RunArgs,
    max_threads: u64,
    help: &str,
) -> Result<RunArgs, std::process::ExitCode> {
    match parse_run_args(args, defaults, max_threads) {
        Ok(Parsed::Run(a)) => Ok(a),
        Ok(Parsed::Help) => {
            print!("{help}");
            Err(std::process::ExitCode::SUCCESS)
        }
        Err(e) => Err(usage(cmd, &e)),
    }
}

/// Prints a usage error of `perdure trace CMD`; exit status 2.
pub fn usage(cmd: &str, msg: &str) -> std::process::ExitCode {
    eprintln!("perdure trace: {msg}");
    eprintln!("run `perdure trace {cmd} --help` for usage");
    std::process::ExitCode::from(2)
}

/// Prints a produced trace (exit 0) or the producer's error (exit 1).
pub fn print_trace<E: std::fmt::Display>(trace: Result<String, E>) -> std::process::ExitCode {
    match trace {
        Ok(t) => {
            print!("{t}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("perdure trace: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn defaults() -> RunArgs {
        RunArgs {
            seed: 1,
            runs: 1,
            threads: 2,
            ops: 3,
            crash: false,
            tamper: None,
        }
    }

    #[test]
    fn options_parse_and_bad_ones_are_errors() {
        assert_eq!(
            parse_run_args(
                &args("--seed 9 --runs 4 --threads 3 --ops 6 --crash --tamper x"),
                defaults(),
                3
            ),
            Ok(Parsed::Run(RunArgs {
                seed: 9,
                runs: 4,
                threads: 3,
                ops: 6,
                crash: true,
                tamper: Some("x".into()),
            }))
        );
        assert_eq!(
            parse_run_args(&args(""), defaults(), 3),
            Ok(Parsed::Run(defaults()))
        );
        assert_eq!(
            parse_run_args(&args("--help"), defaults(), 3),
            Ok(Parsed::Help)
        );
        for bad in [
            "--threads 4",
            "--threads 0",
            "--ops 7",
            "--runs",
            "--seed x",
            "--tamper",
            "--what",
        ] {
            assert!(parse_run_args(&args(bad), defaults(), 3).is_err(), "{bad}");
        }
    }
}
