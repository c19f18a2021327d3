//! The catalogue of the workspace's mutants: every seed step a mutant
//! removes or reorders, by construction, each with its short name
//! (`mutant:<construction>/<name>` in reports). One catalogue, so that the
//! mutation checks of all three constructions can be listed and scored
//! together; each construction's `mutant` module re-exports it, and its
//! `MUTANTS.md` (RELAX: the module docs of `src/mutant.rs`) records which
//! check catches each mutant.
//!
//! The discriminants only have to be distinct (the switch stores one); the
//! order is each construction's order of its tests.

declare_mutants! {
    /// Memento (seed 001): detectable CAS, insert/delete, checkpoint.
    memento {
        /// Algorithm 1, L33: the location is not flushed after the first plain
        /// CAS, before the memento is checkpointed.
        NoFlushLocL33 = 1 => "cas-no-flush-loc-L33",
        /// Algorithm 1, L35: the memento is not flushed (`flushopt`) after
        /// `ts_succ` is stored in it.
        NoFlushMementoL35 = 2 => "cas-no-flush-memento-L35",
        /// Algorithm 2, L13–L16: LOADHELP helps the second plain CAS without
        /// raising HELP\[p\]\[tid\] (the CAS on HELP and its flush are skipped).
        SkipHelpUpdate = 3 => "loadhelp-skip-help-update",
        /// Algorithm 3, L24–L25: INSERT clears the persist bit (L25) before it
        /// flushes the location (L24).
        ClearBeforeFlushL25 = 4 => "insert-clear-before-flush",
        /// §2.2 step 5: the checkpoint's timestamp is written back (`pwb`) but
        /// the `pfence` perdure defers to the thread's next write
        /// (`perdure_memento`'s `Handle::defer_fence`) is never owed.
        CheckpointNoFence = 5 => "checkpoint-no-fence",
        /// Algorithm 1, L38 as published: the un-annotated word is not written
        /// back after the second plain CAS (perdure writes it back, fenced
        /// before the thread's next write).
        NoFlushLocL38 = 6 => "cas-no-flush-loc-L38",
        /// §6.2, PM-safe reclamation: a thread's pin of the epoch is a plain
        /// store with no fence after it (`Epochs::pin_unfenced`). Correct
        /// under sequential consistency; under TSO the pin waits in the
        /// store buffer while the thread reads shared pointers, the epoch
        /// advances twice past it, and a block the thread holds is freed:
        /// the TSO-only mutant of Memento.
        EbrPinNoFence = 36 => "ebr-pin-plain-store-no-fence",
        /// Clevel-mmt growth (`ds/clevel.rs`): a new level is linked with a
        /// plain CAS of the top level's `next` and never written back (no
        /// link-and-persist), so a crash can lose a level an acknowledged
        /// insert used.
        ClevelLinkNoPersist = 45 => "clevel-link-no-persist",
    }
    /// CX-PTM, CX-PUC, Redo-PTM and its variants (seed 000).
    ptm {
        /// Redo-PTM, Algorithm 3 L30–L37: the winner of the `cur_comb` CAS
        /// returns without `pwb(cur_comb)` + `psync` (it still raises the
        /// durability watermark, as if it had synced).
        RedoNoSyncAfterCas = 7 => "redo-no-sync-after-cas",
        /// Redo-PTM, Algorithm 3 L26 (`flushDeferredPWBs`): the replica's dirty
        /// lines are written back after the `cur_comb` CAS instead of before it.
        RedoFlushAfterCas = 8 => "redo-flush-after-cas",
        /// Redo-PTM, Algorithm 3 L38: a failed (or doomed) attempt keeps its
        /// simulated stores — no undo log applied — and the replica's `head` is
        /// still set back to `tail`.
        RedoNoUndoOnFailedCas = 9 => "redo-no-undo-on-failed-cas",
        /// Redo-PTM, Algorithm 3 L19 (`applyRedologs`): the redo logs after the
        /// replica's head are applied without checking that each state is still
        /// the one the ring names (not reused, not overflowed, not lapped).
        RedoReplayWithoutValidity = 10 => "redo-replay-without-validity",
        /// Redo-PTM, Algorithm 3 L31: the superseded replica is released right
        /// after the CAS, as in the seed's pseudo-code, before `pwb(cur_comb)` +
        /// `psync` (the open item of `redo/mod.rs`).
        RedoReleaseBeforeSync = 11 => "redo-release-before-sync",
        /// Redo-PTM, Algorithm 2 L13–L16: a read-only transaction returns
        /// without making the state it read durable.
        RedoReadWithoutSync = 12 => "redo-read-without-sync",
        /// Redo-PTM: no `pfence` between the replica's write-backs and the
        /// `cur_comb` CAS (on a backend whose CAS does not complete them).
        RedoNoFenceBeforeCas = 13 => "redo-no-fence-before-cas",
        /// CX-PTM / CX-PUC, §4: the winner of the `cur_comb` CAS returns without
        /// `pwb(cur_comb)` + `psync` (watermark raised as if it had synced).
        CxNoSyncAfterCas = 14 => "cx-no-sync-after-cas",
        /// CX-PTM / CX-PUC, §4: the replica is written back after the CAS that
        /// designates it (the whole used range, after the CAS, before
        /// `pwb(cur_comb)`), instead of before.
        CxFlushAfterCas = 15 => "cx-flush-after-cas",
        /// CX-PTM / CX-PUC: no `pfence` between the replica's write-backs and
        /// the `cur_comb` CAS.
        CxNoFenceBeforeCas = 17 => "cx-no-fence-before-cas",
        /// RedoTimed-PTM / RedoOpt-PTM, step {5} after the window closed: the
        /// replica the fallback locks outside the window (`combs[2..]`) is
        /// taken as up to date — its `head` set to the designated replica's —
        /// so step {6} neither replays nor copies it, and nothing checks that it
        /// holds that state.
        RedoTimedFallbackWithoutCopy = 18 => "redo-timed-fallback-without-copy",
        /// RedoOpt-PTM, flush aggregation by cache line: the line set's O(1)
        /// reset (a new generation) is skipped when a replica's lines are
        /// written back, so a line that a later commit on the same replica
        /// stores again is taken as already tracked and is not written back
        /// before that commit's `cur_comb` CAS (a line stored twice, flushed
        /// once too few).
        RedoOptLineSetNotReset = 19 => "redo-opt-line-set-not-reset",
        /// RedoOpt-PTM, the full-flush switch: the complete flush drops the
        /// lines tracked so far (the switch promised to cover them) and writes
        /// back `used / 8` bytes of the replica — the used part's length taken
        /// in words for bytes — instead of the whole used part.
        RedoOptFullFlushShort = 20 => "redo-opt-full-flush-short",
        /// Redo-PTM, Algorithm 3 L4 (`announce[tid] = seq`): the
        /// announcement is a `Release` store (a plain `mov` on x86) instead
        /// of `SeqCst` (an `xchg`). Correct under sequential consistency;
        /// under TSO the announcement can wait in the store buffer while the
        /// thread reads `cur_comb` ({2}) and two commits that never saw it
        /// go by, so the thread takes its update as applied, or waits for
        /// it forever: the TSO-only mutant of the PTMs.
        RedoAnnounceRelease = 35 => "redo-announce-store-release",
    }
    /// Mirror and RELAX (seed 002), and the RELAX structures.
    relax {
        /// Algorithm 4.1, L41–L42: the NVMM replica is not written back and
        /// fenced before the DRAM replica is updated.
        NoFlushBeforeDram = 21 => "mirror-no-flush-before-dram-L41",
        /// Algorithm 6.2, L4: the sequence window is not enforced (a garbage
        /// DRAM sequence may be reached again by later writes).
        NoSeqWindow = 22 => "recover-field-no-seq-window-L4",
        /// Algorithm 6.3, L4: the recovered pointer is copied without the
        /// recovery mark, so its referent is never recovered.
        NoRecoveryMark = 23 => "recover-ptr-no-mark-L4",
        /// Algorithm 6.4, L2.2: a marked pointer is unmarked without its
        /// referent being recovered.
        UnmarkWithoutRecover = 24 => "load-unmark-without-recover-L2.2",
        /// Algorithm 4.1, L46–L47 *as written* (Finding M1): after a failed NVMM
        /// DWCAS that saw another value, help with the DRAM pair read at L9–L11
        /// and return false, instead of retrying from the top.
        Line47AsWritten = 25 => "mirror-L47-as-written-M1",
        /// Algorithm 6.2 *as written* (Finding R1): no write-back and fence of
        /// the NVMM pair before line 5's DRAM DWCAS.
        RecoverNoFlush = 26 => "recover-field-no-flush-before-L5-R1",
        /// Algorithm 6.2 *as written* (Finding R2): no re-read of the DRAM pair
        /// after line 2.
        RecoverNoReread = 27 => "recover-field-no-dram-reread-after-L2-R2",
        /// Algorithm 4.1, L44 *as written* (Finding M2): one DRAM DWCAS, even
        /// when it failed only because the recovery mark was set or cleared
        /// since L9.
        Line44Once = 28 => "mirror-L44-once-M2",
        /// §6.4.1/§6.4.3 (Claim 1): BitsetAtomic marks a field recovered, and
        /// HybridAtomicPointer a node, *before* `recover_field` /
        /// `recover_node` returns instead of after.
        TrackBeforeRecover = 29 => "track-recovered-before-recover-returns",
        /// Skip list (`src/ds/skiplist.rs`), `insert`: the new node is linked
        /// at its upper levels before the bottom one (one attempt per level),
        /// and the bottom-level CAS comes last; the seed's order (Fraser;
        /// Herlihy–Shavit §14.4) links level 0 first, its linearisation point.
        SkipLinkUpperFirst = 30 => "skiplist-insert-links-upper-levels-first",
        /// Skip list, `remove`: the node is unlinked from every level by CASing
        /// its predecessors, without first marking its own `next` pointers (the
        /// mark is what makes a concurrent insert after it, or a second remover,
        /// fail).
        SkipRemoveNoMark = 31 => "skiplist-remove-unlinks-without-marking",
        /// BST (`src/ds/bst.rs`), `cleanup`: the sibling edge is not tagged
        /// before the ancestor's edge is swung to it (Natarajan–Mittal's
        /// bit-test-and-set), so an insert below the sibling edge can still
        /// succeed on the unlinked parent.
        BstCleanupNoTag = 32 => "bst-cleanup-no-tag",
        /// BST, `insert`: a flagged leaf (a pending delete) or a flagged or
        /// tagged edge met by the CAS is not helped (`cleanup`); the insert just
        /// retries. Only the deleter then finishes the delete: one that a crash
        /// cut off never does, and the insert spins forever (lock-freedom lost).
        BstInsertNoHelp = 33 => "bst-insert-no-help",
        /// BST, `insert` and `contains`: a leaf with the key counts as present
        /// even when its edge is flagged — Natarajan and Mittal's search, which
        /// does not look at the flag. Not a bug (see the module docs of
        /// `src/ds/bst.rs`): a set of histories no check here can tell apart.
        BstFlaggedLeafPresent = 34 => "bst-flagged-leaf-present",
        /// §6.5, the space's reclamation: a critical section's pin of the
        /// epoch is a plain store with no fence after it
        /// (`Epochs::pin_unfenced`). Correct under sequential consistency;
        /// under TSO a node read in the section can be freed before it ends:
        /// the TSO-only mutant of RELAX.
        SpacePinNoFence = 37 => "space-pin-plain-store-no-fence",
    }
    /// perdure-kv (seed 000, §6): the store on the PTMs.
    kv {
        /// `Store::write`: a batch's first half is committed in one
        /// transaction and the rest in a second.
        KvBatchInTwo = 40 => "batch-in-two-transactions",
        /// `Store::transaction`: a closure's buffered writes are applied even
        /// when it returns `Err`.
        KvTxnAppliesOnErr = 41 => "transaction-applies-on-err",
        /// `index::split_leaf`: a split leaf is not linked to its new right
        /// half, so the leaf chain skips the upper half's keys.
        KvIndexSplitDropsNext = 42 => "index-split-drops-next-link",
        /// `map::put_in`: an overwrite by a value of another size links the
        /// new node into the hash chain but leaves the old, freed one in the
        /// ordered index.
        KvOverwriteStaleIndex = 43 => "overwrite-leaves-old-node-in-index",
        /// `map::write_in`: a batch's blocks are not allocated before its
        /// first operation, so a put that does not fit leaves the batch's
        /// earlier operations applied.
        KvBatchNoAllocFirst = 44 => "batch-allocates-as-it-goes",
    }
}
