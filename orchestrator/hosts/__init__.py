"""Other machines: a hosts file, OpenSSH transport, the project pushed and set up there, a
sweep started detached (directly or through Slurm), waited on, stopped, and its store fetched.

May import: hosts, experiments (the YAML loader and its messages), records, data, errors, signals.
"""
