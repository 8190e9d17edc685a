"""The case study replayed (`factreg demo`), and its kit: stand-in servers on 127.0.0.1, the live part on the
real llama.cpp binaries, and the tiny generated model they use. Nothing in the core imports this package."""
