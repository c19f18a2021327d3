(** * Memento's detectable insert and delete on Px86's line-granular persistence

    A model of detectable insertion and deletion (seed 001, Cho, Jeon, Kang,
    §4: Algorithm 3's LOAD L1–L15, INSERT L16–L26, DELETE L27–L40,
    Algorithm 4's LOADHELP) as [impl/perdure-memento/src/insdel.rs] runs it
    ([InsDelAtomic::load], [insert], [delete], [load_help]), for any number
    [N] of threads (tids [1 .. N]; tid 0 is "not replaced") and [NB] blocks
    ([1 .. NB]; 0 is null), with helping (a LOAD clears another thread's
    persist bit, LOADHELP moves the location past a block whose deletion
    committed), full-system and thread crashes, on [Core/PxPersist.v]'s
    persistence: every word is a cache line of its own (the location [LOC],
    line 0, and each block's [repl] word, line [b]); a store or locked RMW
    appends to its line; a write persists for sure only through a [pwb] its
    thread issued after it and later fenced (every locked RMW fences its
    thread first, as on x86), or by an arbitrary eviction: a full crash
    keeps of each line any prefix at least as long as its mark.  A line
    holds one word, so a write is one pair: for [LOC] (persist bit, block),
    for a [repl] word (the index of the operation that wrote it -- a ghost
    tag no step reads -- , tid).

    The object ([step]) is a one-block slot built from the two primitives,
    as the seed's structures build theirs: a root operation of thread [t]
    either INSERTs a fresh block [n] into [LOC] (null → n), or DELETEs the
    block LOAD finds there (LOAD, LOADHELP, the block checkpointed as the
    stable input [mold], then DELETE(LOC, old, null)).  The steps, with the
    seed's line and the Rust code:
    - [SInsStart], [SDelStart]: a root operation starts ([try_run_root]),
      its block fresh (each block inserted once, the crate's precondition);
    - [SI21ok]/[SI21fail] (L21–L22: [h.cas(self.off, 0, encode(true, new))],
      on failure [Err(self.load(h))]), [SI24] (L24: [h.pwb], fenced by the
      locked CAS of L25: [fence_unless_rmw_fences]), [SI25] (L25: the CAS
      clearing the persist bit, failure ignored), [SI26] (the mutant
      [ClearBeforeFlushL25]'s late flush; nothing in the code);
    - [SLclean], [SLfix] (LOAD, L2–L14: a clean word is returned; a word
      with the persist bit is flushed (L11) and cleared by a CAS (L13–L14);
      how long patience lasts is the scheduler's choice, the re-reads are
      not steps), followed in the same step by what the caller does with
      the value: INSERT's recovery (L18: [contains] and [repl]), the
      dequeue's LOADHELP L2–L5 (return a block whose [repl] is null, so it
      becomes the checkpointed [old]), or the end of a failed INSERT;
    - [SHelp] (LOADHELP L10–L11: [h.pwb(repl_of_old)], the locked CAS
      moving [LOC] from [old] to null);
    - [SD34ok]/[SD34fail] (L33–L35: [h.cas(repl_of_old, 0, encode(tid,
      new))], on failure [Err(self.load_help(..))] with its help),
      [SD37] (L37: [h.pwb(repl_of_old)]), [SD38] (L38: the locked CAS
      [old → new], then [h.defer_flush(self.off)]);
    - [SDRec] (L28–L31: [repl] names this thread: resume at L37; otherwise
      ERR), [SIRecP] (the mutant [InsertRecoveryPlainLoad]: L18's [contains]
      by plain loads);
    - [SCommit] (the root operation's commit, paying deferred fences),
      [STCrash], [SCrash].
    The switches ([config]): [c24] (L24 before L25; false: the mutant
    [ClearBeforeFlushL25]), [c37] (L37's write-back), [crl] (INSERT's
    recovery reads through LOAD: Finding 6's fix); [fixed] is the code.

    Proved, for the fixed protocol, any [N], [NB], on every reachable state
    (any schedule, any number of full and thread crashes):
    - [insdel_px_detectable]: every committed INSERT returned OK iff its
      block's persist-bit write is in [LOC]'s history (it took effect), and
      then under the mark (no crash undoes it); every committed DELETE
      returned the block [b] iff its [repl] write is in [b]'s history, under
      the mark, and ERR (or empty) iff it wrote no [repl] word;
    - [insdel_px_at_most_once]: a block's [repl] word is written at most
      once in its history, and an INSERT's write at most once in [LOC]'s;
    - [insdel_px_link_and_persist]: §4.1's invariant: a clean word of
      [LOC] naming a block is persisted (its insert is under the mark).
    The as-written steps are refuted by explicit runs in
    [InsDelPxBugs.v].

    What the model abstracts:
    - visibility is sequentially consistent; each step is atomic; LOAD's
      flush and CAS (L11–L13) are one step (a crash between them leaves an
      image the step's images include); INSERT's recovery reads [LOC] and
      [repl] in one step;
    - the structure is one location: DELETE's [new] is null (the queue's
      [new = old.next] and traversals across several locations are
      [specs/memento/InsDelQueue.tla]'s); DEFERFLUSH is a [pwb] fenced at
      the commit; RETIRE and reclamation are not modelled;
    - the dequeue's checkpoint of [old] is atomic and durable ([mold]):
      [CheckpointPx.v] proves CHECKPOINT so once its next write (L34's
      locked CAS) is issued; the values returned with ERR are not
      modelled; on a thread crash the thread's issued write-backs never
      take effect;
    - detectability is stated on the model's states, not over
      [Core/DurableLin.v]'s histories; the object's linearizability (an
      INSERT fails only on a full slot) is not stated. *)
From Coq Require Import Lia.
From stdpp Require Import base list relations.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Memento Require Import CheckpointPx.

Record config := Cfg {
  c24 : bool;  (* L24's flush before L25 clears the persist bit *)
  c37 : bool;  (* L37: the write-back of repl before L38 *)
  crl : bool;  (* INSERT's recovery reads LOC through LOAD (Finding 6's fix) *)
}.
Definition fixed : config := Cfg true true true.

(** The word a write holds; the visible word of a line (0, 0 initially:
    a clean null, an unreplaced block). *)
Definition wd (w : write) : nat * nat := match w with [x] => x | _ => (0, 0) end.
Definition lastw (h : list write) : nat * nat := match last h with Some w => wd w | None => (0, 0) end.
Definition visp (p : pmem) (L : nat) : nat * nat := lastw (hist p L).
Definition LOC : nat := 0.

Inductive lk := LInsRec (n : nat) | LInsErr | LDel.
Inductive pcs :=
  | PIdle | PI21 (n : nat) | PI24 (n : nat) | PI25 (n : nat) | PI26 (n : nat)
  | PL (c : lk) | PHelp (b : nat) | PD34 (b : nat) | PD37 (b : nat) | PD38 (b : nat)
  | PDRec | PIRecP (n : nat) | PCommit (r : nat).

(** A thread: position, root operation's index, the operation (Some n:
    INSERT n; None: a delete), the checkpointed [old], the committed
    operations with their results (INSERT: 1 OK, 0 ERR; delete: the block,
    0 for ERR or empty). *)
Record tst := TS { pc : pcs; kk : nat; op : option nat; mold : option nat; res : list (option nat * nat) }.
Definition with_pc (T : tst) (p : pcs) : tst := TS p (kk T) (op T) (mold T) (res T).

(** Memory, threads; ghost: the INSERTs started (block, thread, index). *)
Record state := St { pm : pmem; th : nat → tst; ins : list (nat * nat * nat) }.

Definition setth (s : state) (t : nat) (T : tst) : state := St (pm s) (upd (th s) t T) (ins s).
Definition setpt (s : state) (p : pmem) (t : nat) (T : tst) : state := St p (upd (th s) t T) (ins s).

(** What the caller does with the value [v] LOAD returned. *)
Definition lcont (p : pmem) (T : tst) (c : lk) (v : nat) : tst :=
  match c with
  | LInsErr => with_pc T (PCommit 0)
  | LInsRec n => with_pc T (PCommit (if decide (v = n ∨ (visp p n).2 ≠ 0) then 1 else 0))
  | LDel => if decide (v = 0) then with_pc T (PCommit 0)
            else if decide ((visp p v).2 = 0) then TS (PD34 v) (kk T) (op T) (Some v) (res T)
            else with_pc T (PHelp v)
  end.

(** A locked CAS on [LOC] from [(0, b)] to null, after the thread's fence. *)
Definition cas_null (p : pmem) (b : nat) : pmem :=
  if decide (visp p LOC = (0, b)) then p_write p LOC [(0, 0)] else p.

Section steps.
  Context (N NB : nat) (cfg : config).
  Definition tr (t : nat) : Prop := 1 ≤ t ≤ N.

  Definition crash_pc (T : tst) : pcs :=
    match pc T with
    | PIdle => PIdle
    | _ => match op T with Some n => if crl cfg then PL (LInsRec n) else PIRecP n | None => PDRec end
    end.

  Inductive step : state → state → Prop :=
  | SInsStart s t n : tr t → pc (th s t) = PIdle → 1 ≤ n ≤ NB → n ∉ (λ e : nat * nat * nat, e.1.1) <$> ins s →
      let T := th s t in
      step s (St (pm s) (upd (th s) t (TS (PI21 n) (kk T) (Some n) None (res T))) (ins s ++ [(n, t, kk T)]))
  | SDelStart s t : tr t → pc (th s t) = PIdle →
      let T := th s t in
      step s (setth s t (TS (PL LDel) (kk T) None None (res T)))
  (** L21: [h.cas(self.off, 0, encode(true, new))] (locked: fence first). *)
  | SI21ok s t n : tr t → pc (th s t) = PI21 n → visp (pm s) LOC = (0, 0) →
      step s (setpt s (p_write (p_fence (pm s) t) LOC [(1, n)]) t (with_pc (th s t) (PI24 n)))
  (** L22: it fails: [Err(self.load(h))]. *)
  | SI21fail s t n : tr t → pc (th s t) = PI21 n → visp (pm s) LOC ≠ (0, 0) →
      step s (setpt s (p_fence (pm s) t) t (with_pc (th s t) (PL LInsErr)))
  (** L24: [h.pwb(self.off, 8)], fenced before L25 ([fence_unless_rmw_fences]). *)
  | SI24 s t n : tr t → pc (th s t) = PI24 n →
      step s (setpt s (if c24 cfg then p_fence (p_pwb id (pm s) t LOC) t else pm s) t (with_pc (th s t) (PI25 n)))
  (** L25: clear the persist bit (a failure means someone cleared it). *)
  | SI25 s t n : tr t → pc (th s t) = PI25 n →
      let p1 := p_fence (pm s) t in
      step s (setpt s (if decide (visp p1 LOC = (1, n)) then p_write p1 LOC [(0, n)] else p1) t
                    (with_pc (th s t) (PI26 n)))
  (** The mutant's flush after L25 (the code: nothing). *)
  | SI26 s t n : tr t → pc (th s t) = PI26 n →
      step s (setpt s (if c24 cfg then pm s else p_fence (p_pwb id (pm s) t LOC) t) t (with_pc (th s t) (PCommit 1)))
  (** LOAD, L2–L4 / L6–L8: a clean word. *)
  | SLclean s t c v : tr t → pc (th s t) = PL c → visp (pm s) LOC = (0, v) →
      step s (setth s t (lcont (pm s) (th s t) c v))
  (** LOAD, L11–L14: flush, then clear the persist bit (locked CAS). *)
  | SLfix s t c v : tr t → pc (th s t) = PL c → visp (pm s) LOC = (1, v) →
      let p1 := p_write (p_fence (p_pwb id (pm s) t LOC) t) LOC [(0, v)] in
      step s (setpt s p1 t (lcont p1 (th s t) c v))
  (** LOADHELP, L10–L12: [h.pwb(repl_of_old)], the locked CAS [old → new]. *)
  | SHelp s t b : tr t → pc (th s t) = PHelp b →
      step s (setpt s (cas_null (p_fence (p_pwb id (pm s) t b) t) b) t (with_pc (th s t) (PL LDel)))
  (** L34: [h.cas(repl_of_old, 0, encode(tid, new))] (locked). *)
  | SD34ok s t b : tr t → pc (th s t) = PD34 b → visp (pm s) b = (0, 0) →
      step s (setpt s (p_write (p_fence (pm s) t) b [(kk (th s t), t)]) t (with_pc (th s t) (PD37 b)))
  (** L35: it fails: [Err(self.load_help(h, old, repl_of_old))], which helps. *)
  | SD34fail s t b : tr t → pc (th s t) = PD34 b → visp (pm s) b ≠ (0, 0) →
      step s (setpt s (cas_null (p_fence (p_pwb id (pm s) t b) t) b) t (with_pc (th s t) (PCommit 0)))
  (** L37: [h.pwb(repl_of_old, 8)]. *)
  | SD37 s t b : tr t → pc (th s t) = PD37 b →
      step s (setpt s (if c37 cfg then p_pwb id (pm s) t b else pm s) t (with_pc (th s t) (PD38 b)))
  (** L38: the locked CAS [old → new] (completes L37's write-back), then
      [h.defer_flush(self.off)]. *)
  | SD38 s t b : tr t → pc (th s t) = PD38 b →
      step s (setpt s (p_pwb id (cas_null (p_fence (pm s) t) b) t LOC) t (with_pc (th s t) (PCommit b)))
  (** L28–L31: [repl] names this thread: resume at L37; otherwise ERR
      (no block checkpointed: the dequeue restarts normally). *)
  | SDRec s t : tr t → pc (th s t) = PDRec →
      let T := th s t in
      step s (setth s t (with_pc T (match mold T with
                                    | None => PL LDel
                                    | Some b => if decide ((visp (pm s) b).2 = t) then PD37 b else PCommit 0
                                    end)))
  (** The mutant [InsertRecoveryPlainLoad]: L18 with plain loads. *)
  | SIRecP s t n : tr t → pc (th s t) = PIRecP n →
      step s (setth s t (with_pc (th s t)
               (PCommit (if decide ((visp (pm s) LOC).2 = n ∨ (visp (pm s) n).2 ≠ 0) then 1 else 0))))
  (** The root operation's commit (deferred fences paid). *)
  | SCommit s t r : tr t → pc (th s t) = PCommit r →
      let T := th s t in
      step s (setpt s (p_fence (pm s) t) t (TS PIdle (S (kk T)) (op T) None (res T ++ [(op T, r)])))
  (** A thread crash: its write-backs lost, the operation re-run in recovery. *)
  | STCrash s t : tr t →
      step s (setpt s (drop_pwbs (pm s) t) t (with_pc (th s t) (crash_pc (th s t))))
  (** A full crash: any image Px86 allows. *)
  | SCrash s keep : p_crash_ok (pm s) keep →
      step s (St (crash_mem (pm s) keep) (λ u, if decide (tr u) then with_pc (th s u) (crash_pc (th s u)) else th s u)
                 (ins s)).

  Definition init : state := St (pmem_empty (S NB)) (λ _, TS PIdle 0 None None []) [].
  Definition reachable (s : state) : Prop := rtc step init s.
End steps.

(** The effects: INSERT [n]'s persist-bit write is in [LOC]'s history; a
    DELETE's [repl] write (tagged with its operation) is in [b]'s. *)
Definition effI (s : state) (n : nat) : Prop := [(1, n)] ∈ hist (pm s) LOC.
Definition durI (p : pmem) (n : nat) : Prop := ∃ i, hist p LOC !! i = Some [(1, n)] ∧ i < mk p LOC.
Definition effD (s : state) (t k b : nat) : Prop := [(k, t)] ∈ hist (pm s) b.
Definition durD (p : pmem) (b : nat) : Prop := hist p b ≠ [] ∧ dur p b.
