"""The shared base (the foundation layer): errors, digests, atomic files, bounded readers, bundled data,
plug-in loading, staging, heartbeat, forking, checked inputs, the lazy command group. Imports nothing
of the project above it."""
