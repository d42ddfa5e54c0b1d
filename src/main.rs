fn main() -> std::process::ExitCode {
    rackplan::cli::main()
}
