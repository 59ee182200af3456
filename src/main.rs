fn main() {
    std::process::exit(2);
}
