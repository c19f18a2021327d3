---------------------------- MODULE CommitLogMC ----------------------------
\* Model-checking wrapper: symmetry over thread identifiers.
EXTENDS CommitLog, TLC
Symmetry == Permutations(Threads)
=============================================================================
