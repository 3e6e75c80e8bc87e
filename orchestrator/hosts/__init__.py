"""Other machines: a hosts file, OpenSSH transport, the project pushed and set up there, a
sweep started detached (directly or through Slurm), waited on, stopped, and its store fetched.

May import: hosts, spec (the YAML loader and its messages), data, errors, signals.
"""
