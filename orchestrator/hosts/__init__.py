"""Other machines: a hosts file, OpenSSH transport, the project pushed and set up there, a
sweep started detached (directly or through Slurm), waited on, stopped, and its store fetched.

Its modules: `model` (the hosts file), `ssh` (OpenSSH transport: commands, push by rsync or
tar, atomic fetch), `relay` (rsync's remote shell past a banner: only what follows the
mark), `faults` (a host's failure in one line), `remote` (one host: check, push,
setup, start detached, stop, fetch), `ours` (a remote sweep proven ours: token, start time,
command line, job name), `here` (RESULTS/hosts/NAME checked, attach.json and lock without
links, a fetched store checked), `slurm` (sbatch options, job states), `session` (all hosts in
parallel, re-attach, Ctrl-C, merge per host).

May import: hosts, experiments (the YAML loader and its messages), records, data, errors, signals.
"""
