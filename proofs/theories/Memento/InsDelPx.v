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
    - detectability is stated here on the model's states;
      [InsDelPxLin.v] states it over [Core/DurableLin.v]'s histories,
      for a slot whose ERR may come in any state. *)
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
Global Instance lk_eq_dec : EqDecision lk.
Proof. solve_decision. Defined.
Global Instance pcs_eq_dec : EqDecision pcs.
Proof. solve_decision. Defined.

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

(** ** The invariant *)

Definition blk (A : list (nat * nat * nat)) : list nat := (λ e : nat * nat * nat, e.1.1) <$> A.

Section inv.
  Context (N NB : nat).

  (** The memory: the shapes of the words, §4.1's link-and-persist ([m_A]),
      a deleted block's insert persisted ([m_B]), a block that left [LOC]
      has its deletion persisted ([m_C]), one [repl] write per block, one
      insert write per block. *)
  Record minv (p : pmem) (A : list (nat * nat * nat)) : Prop := {
    m_wf : p_wf p;
    m_nl : nlines p = S NB;
    m_shape : ∀ w, w ∈ hist p LOC → ∃ q b, w = [(q, b)] ∧ b ≤ NB ∧ (q = 1 → 1 ≤ b ∧ b ∈ blk A);
    m_rshape : ∀ b w, 1 ≤ b ≤ NB → w ∈ hist p b → ∃ k t, w = [(k, t)] ∧ 1 ≤ t;
    m_r1 : ∀ b, 1 ≤ b ≤ NB → length (hist p b) ≤ 1;
    m_A : ∀ b, 1 ≤ b → [(0, b)] ∈ hist p LOC → durI p b;
    m_B : ∀ b, 1 ≤ b ≤ NB → hist p b ≠ [] → durI p b;
    m_C : ∀ i j b w, hist p LOC !! i = Some [(1, b)] → i < j → hist p LOC !! j = Some w → (wd w).2 ≠ b → durD p b;
    m_U : ∀ i j n, hist p LOC !! i = Some [(1, n)] → hist p LOC !! j = Some [(1, n)] → i = j;
    m_nd : NoDup (blk A);
    m_ins : ∀ n t k, (n, t, k) ∈ A → 1 ≤ n ≤ NB;
  }.

  (** No write of thread [t] tagged [k' < kb] in [b]'s [repl]. *)
  Definition nott (p : pmem) (t b kb : nat) : Prop := ∀ k', k' < kb → [(k', t)] ∉ hist p b.

  Definition doneok (p : pmem) (A : list (nat * nat * nat)) (t k : nat) (o : option nat) (r : nat) : Prop :=
    match o with
    | Some n => (n, t, k) ∈ A ∧ ((r = 1 ∧ durI p n) ∨ (r = 0 ∧ [(1, n)] ∉ hist p LOC)) ∧
                (∀ b, 1 ≤ b ≤ NB → [(k, t)] ∉ hist p b)
    | None => (∀ b, 1 ≤ b ≤ NB → [(k, t)] ∈ hist p b → r = b) ∧
              (r ≠ 0 → 1 ≤ r ≤ NB ∧ [(k, t)] ∈ hist p r ∧ durD p r)
    end.

  Definition moldok (p : pmem) (t kb : nat) (m : option nat) : Prop :=
    m = None ∨ ∃ b, m = Some b ∧ 1 ≤ b ≤ NB ∧ durI p b ∧ nott p t b kb.

  Definition pcok (p : pmem) (A : list (nat * nat * nat)) (t : nat) (T : tst) : Prop :=
    let k := kk T in
    match pc T with
    | PIdle => mold T = None
    | PI21 n => op T = Some n ∧ (n, t, k) ∈ A ∧ mold T = None ∧ [(1, n)] ∉ hist p LOC
    | PI24 n => op T = Some n ∧ (n, t, k) ∈ A ∧ mold T = None ∧ [(1, n)] ∈ hist p LOC
    | PI25 n | PI26 n => op T = Some n ∧ (n, t, k) ∈ A ∧ mold T = None ∧ durI p n
    | PL (LInsRec n) => op T = Some n ∧ (n, t, k) ∈ A ∧ mold T = None
    | PL LInsErr => ∃ n, op T = Some n ∧ (n, t, k) ∈ A ∧ mold T = None ∧ [(1, n)] ∉ hist p LOC
    | PL LDel => op T = None ∧ mold T = None
    | PHelp b => op T = None ∧ mold T = None ∧ 1 ≤ b ≤ NB ∧ hist p b ≠ []
    | PD34 b => op T = None ∧ mold T = Some b ∧ 1 ≤ b ≤ NB ∧ durI p b ∧ nott p t b (S k)
    | PD37 b => op T = None ∧ mold T = Some b ∧ 1 ≤ b ≤ NB ∧ durI p b ∧ hist p b = [[(k, t)]]
    | PD38 b => op T = None ∧ mold T = Some b ∧ 1 ≤ b ≤ NB ∧ durI p b ∧ hist p b = [[(k, t)]] ∧
                (durD p b ∨ (t, b, 1) ∈ p_pwbs p)
    | PDRec => op T = None ∧ moldok p t k (mold T)
    | PIRecP _ => False
    | PCommit r =>
        match op T with
        | Some n => (n, t, k) ∈ A ∧ mold T = None ∧ ((r = 1 ∧ durI p n) ∨ (r = 0 ∧ [(1, n)] ∉ hist p LOC))
        | None => (r = 0 ∧ moldok p t (S k) (mold T)) ∨
                  (1 ≤ r ≤ NB ∧ mold T = Some r ∧ durI p r ∧ hist p r = [[(k, t)]] ∧ durD p r)
        end
    end.

  Record tinv (p : pmem) (A : list (nat * nat * nat)) (t : nat) (T : tst) : Prop := {
    t_len : length (res T) = kk T;
    t_ins : ∀ n k, (n, t, k) ∈ A → (k < kk T ∧ ∃ r, res T !! k = Some (Some n, r)) ∨ (k = kk T ∧ op T = Some n ∧ pc T ≠ PIdle);
    t_tag : ∀ b k, 1 ≤ b ≤ NB → [(k, t)] ∈ hist p b → k < kk T ∨ (k = kk T ∧ mold T = Some b);
    t_done : ∀ k o r, res T !! k = Some (o, r) → doneok p A t k o r;
    t_pc : pcok p A t T;
  }.

  Record inv (s : state) : Prop := {
    i_m : minv (pm s) (ins s);
    i_th : ∀ t, tr N t → tinv (pm s) (ins s) t (th s t);
    i_ins : ∀ n t k, (n, t, k) ∈ ins s → tr N t;
    i_tag : ∀ b k t, 1 ≤ b ≤ NB → [(k, t)] ∈ hist (pm s) b → tr N t;
  }.
End inv.

(** ** Memory lemmas *)

Lemma nd_unique A n t k t' k' : NoDup (blk A) → (n, t, k) ∈ A → (n, t', k') ∈ A → t = t' ∧ k = k'.
Proof. intros Hnd H1 H2. pose proof (nodup_fmap_inj _ _ _ _ Hnd H1 H2 eq_refl) as He. by injection He. Qed.

Lemma durI_mono p p' n : (∀ L, hist p L `prefix_of` hist p' L) → (∀ L, mk p L ≤ mk p' L) → durI p n → durI p' n.
Proof.
  intros Hp Hm (i & Hi & Hlt). exists i. split; [by eapply prefix_lookup | specialize (Hm LOC); lia].
Qed.

Lemma durD_mono p p' b : p_wf p' → hist p' b = hist p b → mk p b ≤ mk p' b → durD p b → durD p' b.
Proof.
  intros Hwf Hh Hm [Hne Hd]. split; [by rewrite Hh|]. unfold dur in *. pose proof (wf_mk_le p' b Hwf). rewrite Hh in *. lia.
Qed.

Lemma visp_cases p L : (hist p L = [] ∧ visp p L = (0, 0)) ∨ ∃ h w, hist p L = h ++ [w] ∧ visp p L = wd w.
Proof.
  unfold visp, lastw. destruct (last (hist p L)) as [w|] eqn:E.
  - right. apply last_Some in E as [h ->]. exists h, w. done.
  - left. split; [by apply last_None | done].
Qed.

Lemma visp_write_same p L w : L < nlines p → visp (p_write p L [w]) L = w.
Proof. intros HL. unfold visp, lastw. rewrite hist_write_same by done. rewrite last_snoc. done. Qed.

Lemma visp_write_other p L L' w : L' ≠ L → visp (p_write p L w) L' = visp p L'.
Proof. intros. unfold visp. by rewrite hist_write_other. Qed.

Section mem.
  Context (N NB : nat).
  Notation minv := (minv NB).

  Lemma repl_empty p A b : minv p A → 1 ≤ b ≤ NB → (visp p b).2 = 0 → hist p b = [].
  Proof.
    intros Hm Hb Hv. destruct (visp_cases p b) as [[-> _] | (h & w & Hh & Hw)]; [done | exfalso].
    destruct (m_rshape _ _ _ Hm b w Hb) as (k & t & -> & Ht); [rewrite Hh; apply elem_of_app; right; by left|].
    rewrite Hw in Hv. simpl in Hv. lia.
  Qed.

  Lemma repl_nonempty p A b : minv p A → 1 ≤ b ≤ NB → visp p b ≠ (0, 0) → hist p b ≠ [].
  Proof. intros Hm Hb Hv He. apply Hv. unfold visp, lastw. by rewrite He. Qed.

  Lemma repl_single p A b : minv p A → 1 ≤ b ≤ NB → hist p b ≠ [] → ∃ k t, hist p b = [[(k, t)]] ∧ visp p b = (k, t) ∧ 1 ≤ t.
  Proof.
    intros Hm Hb Hne. pose proof (m_r1 _ _ _ Hm b Hb) as Hl.
    destruct (hist p b) as [|w [|w' l]] eqn:E; [done | | simpl in Hl; lia].
    destruct (m_rshape _ _ _ Hm b w Hb) as (k & t & -> & Ht); [rewrite E; by left|].
    exists k, t. split_and!; [done | unfold visp, lastw; by rewrite E | done].
  Qed.

  Lemma loc_last p A q v : minv p A → visp p LOC = (q, v) → (q, v) ≠ (0, 0) →
    ∃ h, hist p LOC = h ++ [[(q, v)]].
  Proof.
    intros Hm Hv Hne. destruct (visp_cases p LOC) as [[_ Hv'] | (h & w & Hh & Hw)]; [congruence|].
    destruct (m_shape _ _ _ Hm w) as (q' & b & -> & _); [rewrite Hh; apply elem_of_app; right; by left|].
    simpl in Hw. rewrite Hw in Hv. injection Hv as -> ->. by exists h.
  Qed.

  (** Marks and histories unchanged or grown only by fences, [pwb]s. *)
  Lemma minv_mono p p' A : p_wf p' → nlines p' = nlines p → (∀ L, hist p' L = hist p L) → (∀ L, mk p L ≤ mk p' L) →
    minv p A → minv p' A.
  Proof.
    intros Hwf Hnl Hh Hmk Hm. assert (HdI : ∀ n, durI p n → durI p' n).
    { intros n. apply durI_mono; [intros L; by rewrite Hh | done]. }
    assert (HdD : ∀ b, durD p b → durD p' b) by (intros b; apply durD_mono; auto).
    destruct Hm as [H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11]. constructor; try done.
    - by rewrite Hnl.
    - intros w. rewrite Hh. apply H3.
    - intros b w. rewrite Hh. apply H4.
    - intros b. rewrite Hh. apply H5.
    - intros b Hb. rewrite Hh. intros Hin. apply HdI. auto.
    - intros b Hb. rewrite Hh. intros Hne. apply HdI. auto.
    - intros i j b w. rewrite Hh. intros Hi Hij Hj Hb. apply HdD. eauto.
    - intros i j n. rewrite Hh. apply H9.
  Qed.

  (** A write [w] appended to [LOC]. *)
  Lemma minv_loc p A q v : minv p A →
    v ≤ NB → (q = 1 → 1 ≤ v ∧ v ∈ blk A) →
    (q = 0 → 1 ≤ v → durI p v) →
    (q = 1 → [(1, v)] ∉ hist p LOC) →
    (∀ b, 1 ≤ b → (visp p LOC).2 = b → v ≠ b → durD p b) →
    minv (p_write p LOC [(q, v)]) A.
  Proof.
    intros Hm Hv Hq1 HA HU HC. pose proof (m_nl _ _ _ Hm) as Hnl.
    assert (HL : LOC < nlines p) by (unfold LOC; lia).
    set (p' := p_write p LOC [(q, v)]).
    assert (HhL : hist p' LOC = hist p LOC ++ [[(q, v)]]) by (by apply hist_write_same).
    assert (Hho : ∀ L, L ≠ LOC → hist p' L = hist p L) by (intros; by apply hist_write_other).
    assert (Hpre : ∀ L, hist p L `prefix_of` hist p' L).
    { intros L. destruct (decide (L = LOC)) as [->|Hne]; [rewrite HhL; by exists [[(q, v)]] | by rewrite Hho]. }
    assert (HdI : ∀ n, durI p n → durI p' n) by (intros n; apply durI_mono; [done | intros; unfold p'; rewrite mk_write; done]).
    assert (HdD : ∀ b, b ≠ LOC → durD p b → durD p' b).
    { intros b Hb. apply durD_mono; [apply p_write_wf, (m_wf _ _ _ Hm) | by apply Hho | unfold p'; rewrite mk_write; done]. }
    destruct Hm as [H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11].
    constructor; try done.
    - by apply p_write_wf.
    - unfold p'. by rewrite nlines_write.
    - rewrite HhL. intros w [Hw | ->%elem_of_list_singleton]%elem_of_app; [by apply H3|]. by exists q, v.
    - intros b w Hb. rewrite Hho by (unfold LOC; lia). by apply H4.
    - intros b Hb. rewrite Hho by (unfold LOC; lia). by apply H5.
    - rewrite HhL. intros b Hb [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply HdI, H6|].
      injection Hin as <- <-. apply HdI. by apply HA.
    - intros b Hb Hne. rewrite Hho in Hne by (unfold LOC; lia). apply HdI. by apply H7.
    - rewrite HhL. intros i j b w Hi Hij Hj Hb.
      apply lookup_app_Some in Hi as [Hi | [Hlen Hi2]];
        [| exfalso; apply lookup_lt_Some in Hj; rewrite app_length in Hj; simpl in Hj;
           apply list_lookup_singleton_Some in Hi2 as [? _]; lia].
      assert (Hb1 : 1 ≤ b).
      { destruct (H3 [(1, b)]) as (q' & b' & Hw & _ & Hq'); [by eapply elem_of_list_lookup_2|].
        injection Hw as <- <-. by destruct (Hq' eq_refl). }
      assert (Hbl : b ≠ LOC) by (unfold LOC; lia).
      assert (Hi' := Hi). apply lookup_lt_Some in Hi'.
      destruct (decide (j < length (hist p LOC))) as [Hjl | Hjl].
      + rewrite lookup_app_l in Hj by done. apply HdD; [done|]. by apply (H8 i j b w).
      + rewrite lookup_app_r in Hj by lia. apply list_lookup_singleton_Some in Hj as [_ <-]. simpl in Hb.
        destruct (decide (S i = length (hist p LOC))) as [Hlast | Hlast].
        * apply HdD; [done|]. apply HC; [done | | done].
          unfold visp, lastw. rewrite last_lookup, <- Hlast. simpl. by rewrite Hi.
        * destruct (lookup_lt_is_Some_2 (hist p LOC) (pred (length (hist p LOC)))) as [wl Hwl]; [lia|].
          destruct (decide ((wd wl).2 = b)) as [Heq | Hneq].
          -- apply HdD; [done|]. apply HC; [done | | done]. unfold visp, lastw. by rewrite last_lookup, Hwl.
          -- apply HdD; [done|]. apply (H8 i (pred (length (hist p LOC))) b wl); [done | lia | done | done].
    - rewrite HhL. intros i j n Hi Hj.
      apply lookup_app_Some in Hi as [Hi | [Hli Hi]], Hj as [Hj | [Hlj Hj]].
      + by apply (H9 i j n).
      + exfalso. apply list_lookup_singleton_Some in Hj as [_ Hj]. injection Hj as -> ->.
        apply (HU eq_refl). by eapply elem_of_list_lookup_2.
      + exfalso. apply list_lookup_singleton_Some in Hi as [_ Hi]. injection Hi as -> ->.
        apply (HU eq_refl). by eapply elem_of_list_lookup_2.
      + apply list_lookup_singleton_Some in Hi as [? _], Hj as [? _]. lia.
  Qed.
  (** A [repl] word written to an empty line. *)
  Lemma minv_repl p A b k t : minv p A → 1 ≤ b ≤ NB → 1 ≤ t → hist p b = [] → durI p b →
    minv (p_write p b [(k, t)]) A.
  Proof.
    intros Hm Hb Ht He HdIb. pose proof (m_nl _ _ _ Hm) as Hnl.
    set (p' := p_write p b [(k, t)]).
    assert (Hhb : hist p' b = [[(k, t)]]) by (unfold p'; rewrite hist_write_same by lia; by rewrite He).
    assert (Hho : ∀ L, L ≠ b → hist p' L = hist p L) by (intros; by apply hist_write_other).
    assert (HhL : hist p' LOC = hist p LOC) by (apply Hho; unfold LOC; lia).
    assert (HdI : ∀ n, durI p n → durI p' n).
    { intros n. apply durI_mono; [| intros; unfold p'; rewrite mk_write; done].
      intros L. destruct (decide (L = b)) as [->|Hne]; [rewrite Hhb, He; apply prefix_nil | by rewrite Hho]. }
    assert (HdD : ∀ b', durD p b' → durD p' b').
    { intros b' Hd. destruct (decide (b' = b)) as [->|Hne]; [destruct Hd as [Hne _]; done|].
      apply (durD_mono p); [apply p_write_wf, (m_wf _ _ _ Hm) | by apply Hho | unfold p'; rewrite mk_write; done | done]. }
    destruct Hm as [H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11].
    constructor; try done.
    - by apply p_write_wf.
    - unfold p'. by rewrite nlines_write.
    - rewrite HhL. done.
    - intros b' w Hb'. destruct (decide (b' = b)) as [->|Hne].
      + rewrite Hhb. intros ->%elem_of_list_singleton. by exists k, t.
      + rewrite Hho by done. by apply H4.
    - intros b' Hb'. destruct (decide (b' = b)) as [->|Hne]; [rewrite Hhb; simpl; lia | rewrite Hho by done; by apply H5].
    - rewrite HhL. intros b' Hb' Hin. apply HdI. by apply H6.
    - intros b' Hb' Hne. apply HdI. destruct (decide (b' = b)) as [->|Hne']; [done|]. rewrite Hho in Hne by done. by apply H7.
    - rewrite HhL. intros i j b' w Hi Hij Hj Hw. apply HdD. by apply (H8 i j b' w).
    - rewrite HhL. done.
  Qed.

  Lemma minv_ins p A n t k : minv p A → 1 ≤ n ≤ NB → n ∉ blk A → minv p (A ++ [(n, t, k)]).
  Proof.
    intros [H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11] Hn Hf. constructor; try done.
    - intros w Hw. destruct (H3 w Hw) as (q & b & -> & Hb & Hq). exists q, b. split_and!; [done | done |].
      intros Hq1. destruct (Hq Hq1) as [? Hin]. split; [done|]. unfold blk. rewrite fmap_app. apply elem_of_app. by left.
    - unfold blk. rewrite fmap_app. apply NoDup_app. split_and!; [done | | apply NoDup_singleton].
      intros x Hx Hx'. simpl in Hx'. apply elem_of_list_singleton in Hx'. subst x. done.
    - intros n' t' k' [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by eapply H11 | injection Hin as -> -> ->; done].
  Qed.

  Lemma durI_crash p keep n : p_crash_ok p keep → LOC < nlines p → durI p n → durI (crash_mem p keep) n.
  Proof.
    intros Hok HL (i & Hi & Hlt). exists i. destruct (Hok LOC HL) as [Hk1 Hk2]. fold (mk p LOC) (hist p LOC) in *.
    rewrite crash_hist, crash_mk by done. rewrite lookup_take by lia. split; [done | lia].
  Qed.

  Lemma durD_crash p keep b : p_crash_ok p keep → b < nlines p → durD p b → durD (crash_mem p keep) b.
  Proof.
    intros Hok Hb [Hne Hd]. destruct (dur_crash p keep b Hok Hb Hd) as [Hd' Hh]. split; [by rewrite Hh | done].
  Qed.

  Lemma minv_crash p A keep : minv p A → p_crash_ok p keep → minv (crash_mem p keep) A.
  Proof.
    intros Hm Hok. pose proof (m_nl _ _ _ Hm) as Hnl.
    assert (HL : LOC < nlines p) by (unfold LOC; lia).
    set (p' := crash_mem p keep).
    assert (Hh : ∀ L, L < nlines p → hist p' L = take (keep L) (hist p L)) by (intros; by apply crash_hist).
    assert (Hsub : ∀ L w, L < nlines p → w ∈ hist p' L → w ∈ hist p L).
    { intros L w HL' Hw. rewrite Hh in Hw by done. apply elem_of_take in Hw as (i & Hi & _). by eapply elem_of_list_lookup_2. }
    assert (Hlk : ∀ L i w, L < nlines p → hist p' L !! i = Some w → hist p L !! i = Some w).
    { intros L i w HL' Hw. rewrite Hh in Hw by done. by apply lookup_take_Some in Hw as [? _]. }
    destruct Hm as [H1 H2 H3 H4 H5 H6 H7 H8 H9 H10 H11].
    constructor; try done.
    - by apply crash_wf.
    - unfold p'. by rewrite crash_nlines.
    - intros w Hw. apply H3. by apply (Hsub LOC).
    - intros b w Hb Hw. apply (H4 b w Hb). apply (Hsub b); [lia | done].
    - intros b Hb. rewrite Hh by lia. rewrite take_length. specialize (H5 b Hb). lia.
    - intros b Hb Hin. apply durI_crash; [done | done |]. apply H6; [done|]. by apply (Hsub LOC).
    - intros b Hb Hne. apply durI_crash; [done | done |]. apply H7; [done|]. intros He. apply Hne. rewrite Hh by lia. rewrite He. apply take_nil.
    - intros i j b w Hi Hij Hj Hw. apply durD_crash; [done | |].
      + destruct (H3 [(1, b)]) as (q & b' & Heq & Hb' & _); [by eapply elem_of_list_lookup_2, (Hlk LOC)|].
        injection Heq as <- <-. lia.
      + apply (H8 i j b w); [by apply (Hlk LOC) | done | by apply (Hlk LOC) | done].
    - intros i j n Hi Hj. apply (H9 i j n); by apply (Hlk LOC).
  Qed.
End mem.

Lemma elem_of_prefix' {A} (x : A) l1 l2 : x ∈ l1 → l1 `prefix_of` l2 → x ∈ l2.
Proof. intros Hx [k ->]. apply elem_of_app. by left. Qed.

Section frame.
  Context (N NB : nat).
  Notation tinv := (tinv NB).
  Notation pcok := (pcok NB).

  (** A step of thread [t'] leaves thread [u]'s invariant: the histories
      only grow, a new insert write is [t']'s, a new [repl] write is
      [t']'s and goes to an empty line, [u]'s write-backs stay. *)
  Lemma tinv_frame p p' A A' u T t' :
    u ≠ t' → p_wf p' →
    (∀ L, hist p L `prefix_of` hist p' L) → (∀ L, mk p L ≤ mk p' L) →
    (∀ m, [(1, m)] ∈ hist p' LOC → [(1, m)] ∈ hist p LOC ∨ ∃ k, (m, t', k) ∈ A') →
    (∀ b w, 1 ≤ b ≤ NB → w ∈ hist p' b → w ∈ hist p b ∨ ∃ k, w = [(k, t')]) →
    (∀ b, 1 ≤ b ≤ NB → hist p b ≠ [] → hist p' b = hist p b) →
    (∀ L n, (u, L, n) ∈ p_pwbs p → (u, L, n) ∈ p_pwbs p') →
    (∀ e, e ∈ A → e ∈ A') → NoDup (blk A') → (∀ n k, (n, u, k) ∈ A' → (n, u, k) ∈ A) →
    tinv p A u T → tinv p' A' u T.
  Proof.
    intros Hne Hwf Hpre Hmk Hins Hrep Hsame Hpw HA HndA HAu [Hlen Htins Htag Hdone Hpc].
    assert (HnI : ∀ n k, (n, u, k) ∈ A → [(1, n)] ∉ hist p LOC → [(1, n)] ∉ hist p' LOC).
    { intros n k Hk Hn Hin. destruct (Hins n Hin) as [Hold | [k' Hk']]; [done|].
      destruct (nd_unique A' n u k t' k' HndA (HA _ Hk) Hk') as [-> _]. done. }
    assert (HiI : ∀ n, [(1, n)] ∈ hist p LOC → [(1, n)] ∈ hist p' LOC) by (intros n Hn; by eapply elem_of_prefix').
    assert (HdI : ∀ n, durI p n → durI p' n) by (intros n; by apply durI_mono).
    assert (Hnott : ∀ b kb, 1 ≤ b ≤ NB → nott p u b kb → nott p' u b kb).
    { intros b kb Hb Hn k' Hk' Hin. destruct (Hrep b _ Hb Hin) as [Hold | [k Hk]]; [by apply (Hn k')|]. injection Hk as _ ->. done. }
    assert (HdD : ∀ b, 1 ≤ b ≤ NB → durD p b → durD p' b).
    { intros b Hb Hd. apply (durD_mono p); [done | apply Hsame; [done | apply Hd] | apply Hmk | done]. }
    assert (Hmold : ∀ kb m, moldok NB p u kb m → moldok NB p' u kb m).
    { intros kb m [-> | (b & -> & Hb & Hd & Hn)]; [by left|].
      right. exists b. split; [done|]. split; [done|]. split; [by apply HdI | by apply Hnott]. }
    constructor; try done.
    - intros n k Hk. apply Htins. by apply HAu.
    - intros b k Hb Hin. destruct (Hrep b _ Hb Hin) as [Hold | [k' Hk']]; [by apply Htag | injection Hk' as _ ->; done].
    - intros k o r Hk. specialize (Hdone k o r Hk). destruct o as [n|]; simpl in *.
      + destruct Hdone as (Hk' & Hr & Hnt). split_and!; [by apply HA | destruct Hr as [[-> Hd] | [-> Hn]]; [left; auto | right; split; [done | by eapply HnI]] |].
        intros b Hb Hin. destruct (Hrep b _ Hb Hin) as [Hold | [k' Hk'']]; [by apply (Hnt b Hb) | injection Hk'' as _ ->; done].
      + destruct Hdone as [Hr Hr0]. split.
        * intros b Hb Hin. destruct (Hrep b _ Hb Hin) as [Hold | [k' Hk']]; [by apply Hr | injection Hk' as _ ->; done].
        * intros Hr'. destruct (Hr0 Hr') as (Hb & Hin & Hd). split; [done|]. split; [by eapply elem_of_prefix' | by apply HdD].
    - unfold pcok in *. destruct (pc T) as [| n | n | n | n | [n | |] | b | b | b | b | | n | r]; try done.
      + destruct Hpc as (? & Hk & ? & Hn). split_and!; try done; [by apply HA | by eapply HnI].
      + destruct Hpc as (? & Hk & ? & Hn). split_and!; try done; try lia; auto.
      + destruct Hpc as (? & Hk & ? & Hn). split_and!; try done; try lia; auto.
      + destruct Hpc as (? & Hk & ? & Hn). split_and!; try done; try lia; auto.
      + destruct Hpc as (? & Hk & ?). split_and!; try done; try lia; auto.
      + destruct Hpc as (n & ? & Hk & ? & Hn). exists n. split_and!; try done; [by apply HA | by eapply HnI].
      + destruct Hpc as (? & ? & Hb & Hne'). split_and!; try done; try lia. intros He. apply Hne'. apply prefix_nil_inv. rewrite <- He. apply Hpre.
      + destruct Hpc as (? & ? & Hb & Hd & Hn). split_and!; try done; try lia; auto.
      + destruct Hpc as (? & ? & Hb & Hd & Hh). split_and!; try done; try lia; auto. rewrite Hsame; [done | done | by rewrite Hh].
      + destruct Hpc as (? & ? & Hb & Hd & Hh & Hp). split_and!; try done; try lia; auto.
        * rewrite Hsame; [done | done | by rewrite Hh].
        * destruct Hp as [Hp | Hp]; [left; auto | right; auto].
      + destruct Hpc as (? & Hm). split; auto.
      + destruct (op T) as [n|].
        * destruct Hpc as (Hk & ? & [[-> Hd] | [-> Hn]]); split_and!; try done; [by apply HA | left; auto | by apply HA | right; split; [done | by eapply HnI]].
        * destruct Hpc as [[-> Hm] | (Hb & ? & Hd & Hh & HdD')]; [left; auto|]. right. split_and!; try done; try lia; auto.
          rewrite Hsame; [done | done | by rewrite Hh].
  Qed.
End frame.

(** ** Frames of a step of operation [k'] of thread [t'] *)
Section fr.
  Context (NB : nat).

  Definition fr (p p' : pmem) (t' k' : nat) (A' : list (nat * nat * nat)) : Prop :=
    p_wf p' ∧ nlines p' = nlines p ∧ (∀ L, hist p L `prefix_of` hist p' L) ∧ (∀ L, mk p L ≤ mk p' L) ∧
    (∀ m, [(1, m)] ∈ hist p' LOC → [(1, m)] ∈ hist p LOC ∨ (m, t', k') ∈ A') ∧
    (∀ b w, 1 ≤ b → w ∈ hist p' b → w ∈ hist p b ∨ w = [(k', t')]) ∧
    (∀ b, 1 ≤ b → hist p b ≠ [] → hist p' b = hist p b) ∧
    (∀ u L n, u ≠ t' → (u, L, n) ∈ p_pwbs p → (u, L, n) ∈ p_pwbs p').

  Lemma fr_trans p1 p2 p3 t' k' A' : fr p1 p2 t' k' A' → fr p2 p3 t' k' A' → fr p1 p3 t' k' A'.
  Proof.
    intros (H1 & H2 & H3 & H4 & H5 & H6 & H7 & H8) (G1 & G2 & G3 & G4 & G5 & G6 & G7 & G8). split_and!.
    - done.
    - congruence.
    - intros L. by trans (hist p2 L).
    - intros L. specialize (H4 L). specialize (G4 L). lia.
    - intros m Hm. destruct (G5 m Hm) as [Hm' | Hm']; [by apply H5 | by right].
    - intros b w Hb Hw. destruct (G6 b w Hb Hw) as [Hw' | Hw']; [by apply H6 | by right].
    - intros b Hb Hne. rewrite G7; [by apply H7 | done | by rewrite H7].
    - intros u L n Hu Hin. by apply G8, H8.
  Qed.

  Lemma fr_mem p p' t' k' A' : p_wf p' → nlines p' = nlines p → (∀ L, hist p' L = hist p L) → (∀ L, mk p L ≤ mk p' L) →
    (∀ u L n, u ≠ t' → (u, L, n) ∈ p_pwbs p → (u, L, n) ∈ p_pwbs p') → fr p p' t' k' A'.
  Proof.
    intros Hwf Hnl Hh Hmk Hpw. split_and!; [done | done | | done | | | | done].
    - intros L. by rewrite Hh.
    - intros m. rewrite Hh. by left.
    - intros b w Hb. rewrite Hh. by left.
    - intros b Hb _. by rewrite Hh.
  Qed.

  Lemma fr_fence p t' k' A' : p_wf p → fr p (p_fence p t') t' k' A'.
  Proof.
    intros Hwf. apply fr_mem; [by apply p_fence_wf | apply nlines_fence | intros; apply hist_fence | intros; apply mk_fence |].
    intros u L n Hu Hin. simpl. apply elem_of_list_filter. done.
  Qed.

  Lemma fr_pwb p t' k' A' L : p_wf p → fr p (p_pwb id p t' L) t' k' A'.
  Proof. intros Hwf. apply fr_mem; try done; [by apply p_pwb_wf | intros u L' n _ Hin; by right]. Qed.

  Lemma fr_drop p t' k' A' : p_wf p → fr p (drop_pwbs p t') t' k' A'.
  Proof.
    intros Hwf. apply fr_mem; try done; [by apply drop_wf|]. intros u L n Hu Hin. simpl. apply elem_of_list_filter. done.
  Qed.

  Lemma fr_loc p q v t' k' A' : p_wf p → LOC < nlines p → (q = 1 → (v, t', k') ∈ A') →
    fr p (p_write p LOC [(q, v)]) t' k' A'.
  Proof.
    intros Hwf HL Hq. split_and!.
    - by apply p_write_wf.
    - apply nlines_write.
    - intros L. destruct (decide (L = LOC)) as [->|Hne]; [rewrite hist_write_same by done; by exists [[(q, v)]] | by rewrite hist_write_other].
    - intros L. by rewrite mk_write.
    - intros m. rewrite hist_write_same by done. intros [Hm | Hm%elem_of_list_singleton]%elem_of_app; [by left|].
      injection Hm as Hq1 Hmv. subst. right. by apply Hq.
    - intros b w Hb. rewrite hist_write_other by (unfold LOC; lia). by left.
    - intros b Hb _. apply hist_write_other. unfold LOC; lia.
    - intros u L n _ Hin. done.
  Qed.

  Lemma fr_repl p b t' k' A' : p_wf p → 1 ≤ b → b < nlines p → hist p b = [] →
    fr p (p_write p b [(k', t')]) t' k' A'.
  Proof.
    intros Hwf Hb HL He. split_and!.
    - by apply p_write_wf.
    - apply nlines_write.
    - intros L. destruct (decide (L = b)) as [->|Hne]; [rewrite hist_write_same by done; by exists [[(k', t')]] | by rewrite hist_write_other].
    - intros L. by rewrite mk_write.
    - intros m. rewrite hist_write_other by (unfold LOC; lia). by left.
    - intros b' w Hb'. destruct (decide (b' = b)) as [->|Hne].
      + rewrite hist_write_same by done. rewrite He. intros ->%elem_of_list_singleton. by right.
      + rewrite hist_write_other by done. by left.
    - intros b' Hb' Hne. destruct (decide (b' = b)) as [->|Hne']; [done | by apply hist_write_other].
    - intros u L n _ Hin. done.
  Qed.

  Lemma fr_cas_null p b t' k' A' : p_wf p → LOC < nlines p → fr p (cas_null p b) t' k' A'.
  Proof.
    intros Hwf HL. unfold cas_null. case_decide; [by apply fr_loc | by apply fr_mem].
  Qed.
End fr.

(** ** The invariant is inductive *)
Section proofs.
  Context (N NB : nat).
  Notation minv := (minv NB).
  Notation tinv := (tinv NB).
  Notation pcok := (pcok NB).
  Notation doneok := (doneok NB).
  Notation moldok := (moldok NB).
  Notation inv := (inv N NB).
  Notation fr := (fr).
  Notation step := (step N NB fixed).

  Lemma lookup_res (T : tst) k o r : length (res T) = kk T → res T !! k = Some (o, r) → k < kk T.
  Proof. intros Hl Hk. apply lookup_lt_Some in Hk. lia. Qed.

  (** The committed operations' facts survive a step of the thread's
      in-flight operation. *)
  Lemma own_done p p' A A' t T : fr p p' t (kk T) A' → NoDup (blk A') → (∀ e, e ∈ A → e ∈ A') → tinv p A t T →
    ∀ k o r, res T !! k = Some (o, r) → doneok p' A' t k o r.
  Proof.
    intros (H1 & H2 & H3 & H4 & H5 & H6 & H7 & H8) Hnd HA Hti k o r Hk.
    pose proof (lookup_res T k o r (t_len _ _ _ _ _ Hti) Hk) as Hlt.
    pose proof (t_done _ _ _ _ _ Hti k o r Hk) as Hd. destruct o as [n|]; simpl in *.
    - destruct Hd as (Hin & Hd & Hnt). split_and!; [by apply HA | | ].
      + destruct Hd as [[-> Hdi] | [-> Hn]]; [left; split; [done | by apply (durI_mono p)] |].
        right. split; [done|]. intros Hin'. destruct (H5 n Hin') as [Hold | Hnew]; [done|].
        destruct (nd_unique A' n t k t (kk T) Hnd (HA _ Hin) Hnew) as [_ ->]. lia.
      + intros b Hb Hin'. destruct (H6 b _ (proj1 Hb) Hin') as [Hold | Hnew]; [by apply (Hnt b Hb) | injection Hnew as ->; lia].
    - destruct Hd as [Hr Hr0]. split.
      + intros b Hb Hin. destruct (H6 b _ (proj1 Hb) Hin) as [Hold | Hnew]; [by apply Hr | injection Hnew as ->; lia].
      + intros Hr'. destruct (Hr0 Hr') as (Hb & Hin & Hdd). split; [done|]. split; [by eapply elem_of_prefix'|].
        apply (durD_mono p); [done | apply H7; [lia | apply Hdd] | apply H4 | done].
  Qed.

  (** A step of the thread that writes no [repl] word and no insert write
      and keeps its position's facts. *)
  Lemma own_frame p p' A t T : fr p p' t (kk T) A → NoDup (blk A) → (∀ b, 1 ≤ b → hist p' b = hist p b) →
    tinv p A t T → pcok p' A t T → tinv p' A t T.
  Proof.
    intros Hfr Hnd Hrep Hti Hpc. constructor; try done; [apply (t_len _ _ _ _ _ Hti) | apply (t_ins _ _ _ _ _ Hti) | | ].
    - intros b k Hb. rewrite Hrep by lia. apply (t_tag _ _ _ _ _ Hti b k Hb).
    - by apply (own_done p p' A A t T).
  Qed.

  (** INSERT's recovery: LOAD returned [v ≠ n] and [repl(n)] is null: [n]
      was never inserted. *)
  Lemma not_inserted p A n v : minv p A → 1 ≤ n ≤ NB → visp p LOC = (0, v) → v ≠ n → (visp p n).2 = 0 →
    [(1, n)] ∉ hist p LOC.
  Proof.
    intros Hm Hn Hv Hvn Hr Hin. pose proof (repl_empty NB p A n Hm Hn Hr) as He.
    apply elem_of_list_lookup_1 in Hin as [i Hi].
    destruct (visp_cases p LOC) as [[Hh _] | (h & w & Hh & Hw)]; [rewrite Hh in Hi; by rewrite lookup_nil in Hi|].
    rewrite Hh in Hi. apply lookup_app_Some in Hi as [Hi | [Hl Hi]].
    - assert (Hd : durD p n).
      { apply (m_C _ _ _ Hm i (length h) n w); [rewrite Hh; by apply lookup_app_l_Some | by apply lookup_lt_Some in Hi
          | rewrite Hh, lookup_app_r, Nat.sub_diag by lia; done | rewrite <- Hw, Hv; done]. }
      destruct Hd as [Hne _]. done.
    - apply list_lookup_singleton_Some in Hi as [_ Hw1]. subst w. rewrite Hv in Hw. simpl in Hw. congruence.
  Qed.

  (** What LOAD's caller does with a clean value [v]. *)
  Lemma lcont_ok p A t T c v : minv p A → tinv p A t T → pc T = PL c → visp p LOC = (0, v) →
    tinv p A t (lcont p T c v).
  Proof.
    intros Hm Hti Hpc Hv. pose proof (t_pc _ _ _ _ _ Hti) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    assert (Hkeep : ∀ P, P ≠ PIdle → pcok p A t (with_pc T P) → tinv p A t (with_pc T P)).
    { intros P HP Hpc'. destruct Hti as [Hl Hins Htag Hdone _]. constructor; cbn [with_pc kk res op mold pc]; try done.
      intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | by right]. }
    destruct c as [n | |]; simpl.
    - destruct Hp as (Hop & Hin & Hmo). apply Hkeep; [done|]. unfold pcok. cbn [with_pc pc kk op mold].
      rewrite Hop. split_and!; [done | done |]. pose proof (m_ins _ _ _ Hm n t (kk T) Hin) as Hn.
      case_decide as Hc.
      + left. split; [done|]. destruct Hc as [-> | Hr].
        * apply (m_A _ _ _ Hm); [lia|]. destruct (loc_last NB p A 0 n Hm Hv) as [h ->]; [intros E; injection E; lia|].
          apply elem_of_app. right. by left.
        * apply (m_B _ _ _ Hm n Hn). intros He. apply Hr. unfold visp, lastw. by rewrite He.
      + right. split; [done|]. apply not_inserted with A v; try done; [intros ->; apply Hc; by left | ].
        destruct (decide ((visp p n).2 = 0)); [done|]. exfalso. apply Hc. by right.
    - destruct Hp as (n & Hop & Hin & Hmo & Hn). apply Hkeep; [done|]. unfold pcok. cbn [with_pc pc kk op mold].
      rewrite Hop. split_and!; [done | done |]. right. done.
    - destruct Hp as (Hop & Hmo). case_decide as Hv0.
      + apply Hkeep; [done|]. unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. left. split; [done | by left].
      + assert (Hvb : 1 ≤ v ≤ NB).
        { destruct (loc_last NB p A 0 v Hm Hv) as [h Hh]; [intros E; injection E; lia|].
          destruct (m_shape _ _ _ Hm [(0, v)]) as (q & b & E & Hb & _); [rewrite Hh; apply elem_of_app; right; by left|].
          injection E as <- <-. lia. }
        case_decide as Hr.
        * destruct Hti as [Hl Hins Htag Hdone _]. constructor; cbn [kk res op mold pc]; try done.
          -- intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | by right].
          -- intros b k Hb Hin. destruct (Htag b k Hb Hin) as [? | [-> Hmo']]; [by left | rewrite Hmo in Hmo'; done].
          -- unfold pcok. cbn [pc kk op mold]. split_and!; try done; try lia.
             ++ apply (m_A _ _ _ Hm); [lia|]. destruct (loc_last NB p A 0 v Hm Hv) as [h ->]; [intros E; injection E; lia|].
                apply elem_of_app. right. by left.
             ++ intros k' _ Hin. rewrite (repl_empty NB p A v Hm Hvb Hr) in Hin. by apply elem_of_nil in Hin.
        * apply Hkeep; [done|]. unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done; try lia.
          apply (repl_nonempty NB p A v Hm Hvb). intros E. apply Hr. by rewrite E.
  Qed.
End proofs.

Section steps_inv.
  Context (N NB : nat).
  Notation minv := (minv NB).
  Notation tinv := (tinv NB).
  Notation pcok := (pcok NB).
  Notation doneok := (doneok NB).
  Notation moldok := (moldok NB).
  Notation inv := (inv N NB).
  Notation step := (step N NB fixed).
  Notation tr := (tr N).

  Lemma inv_step s s' t k' : inv s → tr t →
    fr (pm s) (pm s') t k' (ins s') → minv (pm s') (ins s') →
    (∀ n u k, (n, u, k) ∈ ins s' → tr u) →
    (∀ e, e ∈ ins s → e ∈ ins s') →
    (∀ n u k, u ≠ t → (n, u, k) ∈ ins s' → (n, u, k) ∈ ins s) →
    (∀ u, u ≠ t → th s' u = th s u) →
    tinv (pm s') (ins s') t (th s' t) → inv s'.
  Proof.
    intros Hi Ht Hfr Hm Htr HA HAo Hth Htt. constructor; try done.
    2: { intros b k u Hb Hin. destruct Hfr as (_ & _ & _ & _ & _ & H6 & _).
         destruct (H6 b _ (proj1 Hb) Hin) as [Hold | Hnew]; [by apply (i_tag _ _ _ Hi b k u Hb) | by injection Hnew as _ <-]. }
    intros u Hu. destruct (decide (u = t)) as [->|Hne]; [done|]. rewrite Hth by done.
    destruct Hfr as (H1 & H2 & H3 & H4 & H5 & H6 & H7 & H8).
    apply (tinv_frame NB (pm s) (pm s') (ins s) (ins s') u (th s u) t); try done.
    - intros m Hin. destruct (H5 m Hin) as [? | ?]; [by left | right; by exists k'].
    - intros b w Hb Hin. destruct (H6 b w (proj1 Hb) Hin) as [? | ?]; [by left | right; by exists k'].
    - intros b Hb. apply H7. lia.
    - intros L n Hin. by apply H8.
    - apply (m_nd _ _ _ Hm).
    - intros n k Hin. by apply (HAo n u k).
    - by apply (i_th _ _ _ Hi).
  Qed.

  Lemma upd_same {A} (f : nat → A) t a u : u ≠ t → upd f t a u = f u.
  Proof. intros. unfold upd. by rewrite decide_False. Qed.
  Lemma upd_here {A} (f : nat → A) t a : upd f t a t = a.
  Proof. unfold upd. by rewrite decide_True. Qed.

  (** The thread's own invariant with a new position, when memory facts
      of the committed operations and the tags are kept. *)
  Lemma tinv_pc p A t T P : tinv p A t T → P ≠ PIdle → pcok p A t (with_pc T P) → tinv p A t (with_pc T P).
  Proof.
    intros [Hl Hins Htag Hdone _] HP Hpc. constructor; cbn [with_pc kk res op mold pc]; try done.
    intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | by right].
  Qed.
End steps_inv.

Section step_inv.
  Context (N NB : nat).
  Notation minv := (minv NB).
  Notation tinv := (tinv NB).
  Notation pcok := (pcok NB).
  Notation inv := (inv N NB).
  Notation step := (step N NB fixed).
  Notation tr := (tr N).

  Ltac start s Hi Ht := pose proof (i_m _ _ _ Hi) as Hm; pose proof (i_th _ _ _ Hi _ Ht) as Hti;
    pose proof (t_pc _ _ _ _ _ Hti) as Hp; pose proof (m_nl _ _ _ Hm) as Hnl; pose proof (m_wf _ _ _ Hm) as Hwf;
    assert (HL : LOC < nlines (pm s)) by (unfold LOC; lia).


  Lemma step_insstart s t n : inv s → tr t → pc (th s t) = PIdle → 1 ≤ n ≤ NB → n ∉ blk (ins s) →
    let T := th s t in
    inv (St (pm s) (upd (th s) t (TS (PI21 n) (kk T) (Some n) None (res T))) (ins s ++ [(n, t, kk T)])).
  Proof.
    intros Hi Ht Hpc Hn Hf T. start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp.
    set (A' := ins s ++ [(n, t, kk T)]).
    assert (HA : ∀ e, e ∈ ins s → e ∈ A') by (intros e He; apply elem_of_app; by left).
    assert (Hm' : minv (pm s) A') by (by apply minv_ins).
    assert (Hfr : fr (pm s) (pm s) t (kk T) A') by (apply fr_mem; done).
    eapply (inv_step N NB s _ t (kk T)); cbn [pm ins th]; try done.
    - intros n' u k [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (i_ins _ _ _ Hi n' u k) | by injection Hin as -> -> ->].
    - intros n' u k Hu [Hin | Hin%elem_of_list_singleton]%elem_of_app; [done | by injection Hin as -> -> ->].
    - intros u Hu. by apply upd_same.
    - rewrite upd_here. pose proof Hti as [Hl Hins Htag Hdone _]. constructor; cbn [kk res op mold pc]; try done.
      + intros n' k [Hin | Hin%elem_of_list_singleton]%elem_of_app.
        * destruct (Hins n' k Hin) as [? | (_ & _ & ?)]; [by left | done].
        * injection Hin as -> ->. by right.
      + intros b k Hb Hin. destruct (Htag b k Hb Hin) as [? | [? Hmo]]; [by left | subst T; rewrite Hp in Hmo; done].
      + apply (own_done NB (pm s) (pm s) (ins s) A' t T Hfr (m_nd _ _ _ Hm') HA). exact Hti.
      + unfold pcok. cbn [pc kk op mold]. split_and!; try done.
        * apply elem_of_app. right. by left.
        * intros Hin. destruct (m_shape _ _ _ Hm _ Hin) as (q & b & E & _ & Hq). injection E as <- <-. by destruct (Hq eq_refl).
  Qed.
  Lemma minv_fence p A t : minv p A → minv (p_fence p t) A.
  Proof.
    intros Hm. apply (minv_mono NB p); [by apply p_fence_wf, (m_wf _ _ _ Hm) | apply nlines_fence | intros; apply hist_fence | intros; apply mk_fence | done].
  Qed.
  Lemma minv_pwb p A t L : minv p A → minv (p_pwb id p t L) A.
  Proof. intros Hm. apply (minv_mono NB p); try done. by apply p_pwb_wf, (m_wf _ _ _ Hm). Qed.
  Lemma minv_drop p A t : minv p A → minv (drop_pwbs p t) A.
  Proof. intros Hm. apply (minv_mono NB p); try done. by apply drop_wf, (m_wf _ _ _ Hm). Qed.

  Lemma own_step p p' A t T P : fr p p' t (kk T) A → NoDup (blk A) → (∀ b, 1 ≤ b → hist p' b = hist p b) →
    tinv p A t T → P ≠ PIdle → pcok p' A t (with_pc T P) → tinv p' A t (with_pc T P).
  Proof.
    intros Hfr Hnd Hrep Hti HP Hpc. pose proof Hti as [Hl Hins Htag Hdone _].
    constructor; cbn [with_pc kk res op mold pc]; try done.
    - intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | by right].
    - intros b k Hb. rewrite Hrep by lia. apply Htag, Hb.
    - by apply (own_done NB p p' A A t T).
  Qed.

  Lemma fr_id p t k A : p_wf p → fr p p t k A.
  Proof. intros Hwf. by apply fr_mem. Qed.

  (** A [pwb] of a line [L] with a single write, then a fence: durable. *)
  Lemma durD_pwb_fence p t b : p_wf p → b < nlines p → hist p b ≠ [] → length (hist p b) ≤ 1 →
    durD (p_fence (p_pwb id p t b) t) b.
  Proof.
    intros Hwf HL Hne Hl. split; [rewrite hist_fence; done|].
    apply dur_fence_pwb; [by apply p_pwb_wf | done | left].
  Qed.

  (** In [LOC], the last write is under the mark after a [pwb] and a fence. *)
  Lemma durI_pwb_fence p A t n : minv p A → visp p LOC = (1, n) → durI (p_fence (p_pwb id p t LOC) t) n.
  Proof.
    intros Hm Hv. destruct (loc_last NB p A 1 n Hm Hv) as [h Hh]; [intros E; injection E; lia|].
    assert (HL : LOC < nlines p) by (rewrite (m_nl _ _ _ Hm); unfold LOC; lia).
    pose proof (dur_fence_pwb (p_pwb id p t LOC) t LOC (p_pwb_wf id p t LOC (m_wf _ _ _ Hm)) HL ltac:(left)) as Hd.
    unfold dur in Hd. exists (length h). rewrite Hd, !hist_fence.
    change (hist (p_pwb id p t LOC) LOC) with (hist p LOC). rewrite Hh.
    split; [rewrite lookup_app_r, Nat.sub_diag by lia; done | rewrite app_length; simpl; lia].
  Qed.

  Lemma durI_in p A n : minv p A → [(1, n)] ∈ hist p LOC → ∃ i, hist p LOC !! i = Some [(1, n)].
  Proof. intros _ Hin. by apply elem_of_list_lookup_1 in Hin. Qed.

  Lemma nott_weak p t b k k' : k' ≤ k → nott p t b k → nott p t b k'.
  Proof. intros Hle Hn k'' Hk. apply Hn. lia. Qed.

  (** What a crash leaves of the position's facts: the recovery's. *)
  Lemma crash_target p p' A t T : pcok p A t T → pc T ≠ PIdle →
    (∀ n, durI p n → durI p' n) → (∀ b kb, nott p t b kb → nott p' t b kb) →
    (∀ b, hist p b = [[(kk T, t)]] → nott p' t b (kk T)) →
    pcok p' A t (with_pc T (crash_pc fixed T)).
  Proof.
    intros Hp Hne HdI Hnt Hone. unfold crash_pc. cbn [crl fixed]. unfold pcok in Hp |- *.
    destruct (pc T) as [| n | n | n | n | [n | |] | b | b | b | b | | n | r] eqn:E; try done;
      cbn [with_pc pc kk op mold].
    all: try (destruct Hp as (Hop & Hin & Hmo & _); rewrite Hop; split_and!; done).
    - destruct Hp as (Hop & Hin & Hmo). rewrite Hop. split_and!; done.
    - destruct Hp as (n & Hop & Hin & Hmo & _). rewrite Hop. split_and!; done.
    - destruct Hp as (Hop & Hmo). rewrite Hop. split; [done | by left].
    - destruct Hp as (Hop & Hmo & _). rewrite Hop. split; [done | by left].
    - destruct Hp as (Hop & Hmo & Hb & Hd & Hn). rewrite Hop. split; [done|]. right. exists b.
      split_and!; try done; try lia; [by apply HdI | apply Hnt; eapply nott_weak; [| done]; lia].
    - destruct Hp as (Hop & Hmo & Hb & Hd & Hh). rewrite Hop. split; [done|]. right. exists b.
      split_and!; try done; try lia; [by apply HdI | by apply Hone].
    - destruct Hp as (Hop & Hmo & Hb & Hd & Hh & _). rewrite Hop. split; [done|]. right. exists b.
      split_and!; try done; try lia; [by apply HdI | by apply Hone].
    - destruct Hp as (Hop & Hm). rewrite Hop. split; [done|].
      destruct Hm as [-> | (b & -> & Hb & Hd & Hn)]; [by left | right; exists b; split_and!; try done; try lia; auto].
    - destruct (op T) as [n|] eqn:Eo.
      + destruct Hp as (Hin & Hmo & _). split_and!; done.
      + split; [done|]. destruct Hp as [[-> [-> | (b & -> & Hb & Hd & Hn)]] | (Hb & -> & Hd & Hh & _)]; [by left | |].
        * right. exists b. split_and!; try done; try lia; [by apply HdI | apply Hnt; eapply nott_weak; [| done]; lia].
        * right. exists r. split_and!; try done; try lia; [by apply HdI | by apply Hone].
  Qed.

  Lemma one_nott p t b k : hist p b = [[(k, t)]] → nott p t b k.
  Proof. intros Hh k' Hk Hin. rewrite Hh in Hin. apply elem_of_list_singleton in Hin. injection Hin. lia. Qed.

  Ltac own_same s t Hi Ht := eapply (inv_step N NB s _ t (kk (th s t))); cbn [setpt setth pm ins th];
    [exact Hi | exact Ht | | | apply (i_ins _ _ _ Hi) | done | done | intros ? ?; by apply upd_same | rewrite upd_here].

  Lemma step_inv s s' : inv s → step s s' → inv s'.
  Proof.
    intros Hi Hs. destruct Hs as [s t n Ht Hpc Hn Hf | s t Ht Hpc | s t n Ht Hpc Hv | s t n Ht Hpc Hv | s t n Ht Hpc
      | s t n Ht Hpc | s t n Ht Hpc | s t c v Ht Hpc Hv | s t c v Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc Hv
      | s t b Ht Hpc Hv | s t b Ht Hpc | s t b Ht Hpc | s t Ht Hpc | s t n Ht Hpc | s t r Ht Hpc | s t Ht | s keep Hok].
    - by apply step_insstart.
    - (* SDelStart *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. own_same s t Hi Ht.
      + by apply fr_id.
      + done.
      + pose proof Hti as [Hl Hins Htag Hdone _]. constructor; cbn [kk res op mold pc]; try done.
        * intros n k Hk. destruct (Hins n k Hk) as [? | (_ & _ & ?)]; [by left | done].
        * intros b k Hb Hin. destruct (Htag b k Hb Hin) as [? | [? Hmo]]; [by left | rewrite Hp in Hmo; done].
    - (* SI21ok *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hin & Hmo & Hn).
      assert (HnB := m_ins _ _ _ Hm _ _ _ Hin).
      own_same s t Hi Ht.
      + eapply fr_trans; [by apply fr_fence | apply fr_loc; [by apply p_fence_wf | by rewrite nlines_fence | done]].
      + apply minv_loc; [by apply minv_fence | lia | | done | by rewrite hist_fence |].
        * intros _. split; [lia|]. apply elem_of_list_fmap. by exists (n, t, kk (th s t)).
        * intros b Hb. unfold visp. rewrite hist_fence. fold (visp (pm s) LOC). rewrite Hv. simpl. lia.
      + apply (own_step (pm s)); try done.
        * eapply fr_trans; [by apply fr_fence | apply fr_loc; [by apply p_fence_wf | by rewrite nlines_fence | done]].
        * apply (m_nd _ _ _ Hm).
        * intros b Hb. rewrite hist_write_other by (unfold LOC; lia). apply hist_fence.
        * unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done.
          rewrite hist_write_same by (by rewrite nlines_fence). apply elem_of_app. right. by left.
    - (* SI21fail *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hin & Hmo & Hn).
      own_same s t Hi Ht.
      + by apply fr_fence.
      + by apply minv_fence.
      + apply (own_step (pm s)); try done; [by apply fr_fence | apply (m_nd _ _ _ Hm) | intros; apply hist_fence |].
        unfold pcok. cbn [with_pc pc kk op mold]. exists n. split_and!; try done. by rewrite hist_fence.
    - (* SI24 *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hin & Hmo & Hn). cbn [c24 fixed].
      assert (Hfr : fr (pm s) (p_fence (p_pwb id (pm s) t LOC) t) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [by apply fr_pwb | apply fr_fence; by apply p_pwb_wf]. }
      own_same s t Hi Ht.
      + done.
      + by apply minv_fence, minv_pwb.
      + apply (own_step (pm s)); try done; [apply (m_nd _ _ _ Hm) | intros; rewrite hist_fence; done |].
        unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done.
        apply elem_of_list_lookup_1 in Hn as [i Hi'].
        pose proof (dur_fence_pwb (p_pwb id (pm s) t LOC) t LOC (p_pwb_wf id _ t LOC Hwf) HL ltac:(left)) as Hd.
        exists i. unfold dur in Hd. rewrite Hd, !hist_fence. change (hist (p_pwb id (pm s) t LOC) LOC) with (hist (pm s) LOC).
        split; [done|]. by apply lookup_lt_Some in Hi'.
    - (* SI25 *)
      subst p1. start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hin & Hmo & Hd).
      assert (HnB := m_ins _ _ _ Hm _ _ _ Hin).
      set (p1 := p_fence (pm s) t).
      assert (Hwf1 : p_wf p1) by (by apply p_fence_wf).
      assert (HL1 : LOC < nlines p1) by (unfold p1; by rewrite nlines_fence).
      assert (Hd1 : durI p1 n) by (apply (durI_mono (pm s)); [intros; unfold p1; by rewrite hist_fence | intros; apply mk_fence | done]).
      assert (Hfr : fr (pm s) (if decide (visp p1 LOC = (1, n)) then p_write p1 LOC [(0, n)] else p1) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [by apply fr_fence|]. case_decide; [apply fr_loc; try done | by apply fr_id]. }
      own_same s t Hi Ht.
      + done.
      + case_decide as Hc; [| by apply minv_fence]. apply minv_loc; [by apply minv_fence | lia | done | done | done |].
        intros b Hb Hvb Hne. exfalso. rewrite Hc in Hvb. simpl in Hvb. lia.
      + apply (own_step (pm s)); try done; [apply (m_nd _ _ _ Hm) | |].
        * intros b Hb. case_decide; [rewrite hist_write_other by (unfold LOC; lia)|]; unfold p1; apply hist_fence.
        * unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done.
          case_decide; [| done]. apply (durI_mono p1); [| intros; by rewrite mk_write | done].
          intros L. destruct (decide (L = LOC)) as [->|Hne]; [rewrite hist_write_same by done; by exists [[(0, n)]] | by rewrite hist_write_other].
    - (* SI26 *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hin & Hmo & Hd). cbn [c24 fixed].
      own_same s t Hi Ht; [by apply fr_id | done |].
      apply (own_step (pm s)); try done; [by apply fr_id | apply (m_nd _ _ _ Hm) |].
      unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. split_and!; try done. left. done.
    - (* SLclean *)
      start s Hi Ht. own_same s t Hi Ht; [by apply fr_id | done |].
      by apply (lcont_ok NB (pm s) (ins s) t (th s t) c v).
    - (* SLfix *)
      subst p1. start s Hi Ht. pose proof Hp as Hp0. unfold pcok in Hp. rewrite Hpc in Hp.
      assert (HvB : 1 ≤ v ≤ NB).
      { destruct (loc_last NB (pm s) (ins s) 1 v Hm Hv) as [h Hh]; [intros E; injection E; lia|].
        destruct (m_shape _ _ _ Hm [(1, v)]) as (q & b & E & Hb & Hq); [rewrite Hh; apply elem_of_app; right; by left|].
        injection E as <- <-. destruct (Hq eq_refl). lia. }
      set (p2 := p_fence (p_pwb id (pm s) t LOC) t).
      assert (Hwf2 : p_wf p2) by (by apply p_fence_wf, p_pwb_wf).
      assert (HL2 : LOC < nlines p2) by (unfold p2; by rewrite nlines_fence).
      set (p1 := p_write p2 LOC [(0, v)]).
      assert (Hfr : fr (pm s) p1 t (kk (th s t)) (ins s)).
      { eapply fr_trans; [| apply fr_loc; [done | done | done]]. eapply fr_trans; [by apply fr_pwb | apply fr_fence; by apply p_pwb_wf]. }
      assert (Hm1 : minv p1 (ins s)).
      { apply minv_loc; [by apply minv_fence, minv_pwb | lia | done | intros _ _; by apply (durI_pwb_fence (pm s) (ins s)) | done |].
        intros b Hb Hvb Hne. exfalso. unfold visp in Hvb. unfold p2 in Hvb. rewrite hist_fence in Hvb.
        change (hist (p_pwb id (pm s) t LOC) LOC) with (hist (pm s) LOC) in Hvb. fold (visp (pm s) LOC) in Hvb.
        rewrite Hv in Hvb. simpl in Hvb. lia. }
      own_same s t Hi Ht; [done | done |].
      apply (lcont_ok NB p1 (ins s) t (th s t) c v); [done | | done | by apply visp_write_same].
      apply (own_frame NB (pm s)); try done; [apply (m_nd _ _ _ Hm) | |].
      + intros b Hb. unfold p1. rewrite hist_write_other by (unfold LOC; lia). unfold p2. by rewrite hist_fence.
      + unfold pcok. rewrite Hpc. destruct c as [n | |]; try done.
        destruct Hp as (n & Hop & Hin & Hmo & Hn). exists n. split_and!; try done.
        unfold p1. rewrite hist_write_same by done. unfold p2. rewrite hist_fence.
        change (hist (p_pwb id (pm s) t LOC) LOC) with (hist (pm s) LOC).
        intros [Hin' | Hin'%elem_of_list_singleton]%elem_of_app; [done | discriminate].
    - (* SHelp *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo & Hb & Hne).
      assert (HbL : b < nlines (pm s)) by lia.
      set (p2 := p_fence (p_pwb id (pm s) t b) t).
      assert (Hwf2 : p_wf p2) by (by apply p_fence_wf, p_pwb_wf).
      assert (HL2 : LOC < nlines p2) by (unfold p2; by rewrite nlines_fence).
      assert (HdD : durD p2 b) by (apply durD_pwb_fence; try done; by apply (m_r1 _ _ _ Hm)).
      assert (Hfr : fr (pm s) (cas_null p2 b) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [| by apply fr_cas_null]. eapply fr_trans; [by apply fr_pwb | apply fr_fence; by apply p_pwb_wf]. }
      own_same s t Hi Ht; [done | |].
      + unfold cas_null. case_decide as Hc; [| by apply minv_fence, minv_pwb].
        apply minv_loc; [by apply minv_fence, minv_pwb | lia | done | intros _ ?; lia | done |].
        intros b' Hb' Hvb _. rewrite Hc in Hvb. simpl in Hvb. by subst b'.
      + apply (own_step (pm s)); [done | apply (m_nd _ _ _ Hm) | | exact Hti | done | ].
        * intros b' Hb'. unfold cas_null. case_decide; [rewrite hist_write_other by (unfold LOC; lia)|]; unfold p2; by rewrite hist_fence.
        * unfold pcok. cbn [with_pc pc kk op mold]. done.
    - (* SD34ok *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo & Hb & Hd & Hn).
      assert (HbL : b < nlines (pm s)) by lia.
      assert (He : hist (pm s) b = []) by (apply (repl_empty NB (pm s) (ins s) b Hm Hb); by rewrite Hv).
      set (p1 := p_fence (pm s) t).
      assert (Hwf1 : p_wf p1) by (by apply p_fence_wf).
      assert (He1 : hist p1 b = []) by (unfold p1; by rewrite hist_fence).
      assert (Hfr : fr (pm s) (p_write p1 b [(kk (th s t), t)]) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [by apply fr_fence | apply fr_repl; try done; [lia | unfold p1; by rewrite nlines_fence]]. }
      assert (Hhb : hist (p_write p1 b [(kk (th s t), t)]) b = [[(kk (th s t), t)]]).
      { rewrite hist_write_same by (unfold p1; by rewrite nlines_fence). by rewrite He1. }
      own_same s t Hi Ht; [done | |].
      + apply minv_repl; [by apply minv_fence | done | unfold tr in Ht; lia | done |].
        apply (durI_mono (pm s)); [intros; unfold p1; by rewrite hist_fence | intros; apply mk_fence | done].
      + pose proof Hti as [Hl Hins Htag Hdone _]. constructor; cbn [with_pc kk res op mold pc].
        * done.
        * intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | by right].
        * intros b' k Hb' Hin. destruct (decide (b' = b)) as [->|Hne'].
          -- rewrite Hhb in Hin. apply elem_of_list_singleton in Hin. injection Hin as ->. by right.
          -- rewrite hist_write_other in Hin by done. unfold p1 in Hin. rewrite hist_fence in Hin. by apply Htag.
        * apply (own_done NB (pm s) _ (ins s) (ins s) t (th s t) Hfr (m_nd _ _ _ Hm)); [done | exact Hti].
        * unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done; try lia.
          destruct Hfr as (_ & _ & Hpre & Hmk & _). by apply (durI_mono (pm s)).
    - (* SD34fail *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo & Hb & Hd & Hn).
      assert (HbL : b < nlines (pm s)) by lia.
      assert (Hne : hist (pm s) b ≠ []) by (by apply (repl_nonempty NB (pm s) (ins s) b Hm Hb)).
      set (p2 := p_fence (p_pwb id (pm s) t b) t).
      assert (Hwf2 : p_wf p2) by (by apply p_fence_wf, p_pwb_wf).
      assert (HL2 : LOC < nlines p2) by (unfold p2; by rewrite nlines_fence).
      assert (HdD : durD p2 b) by (apply durD_pwb_fence; try done; by apply (m_r1 _ _ _ Hm)).
      assert (Hfr : fr (pm s) (cas_null p2 b) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [| by apply fr_cas_null]. eapply fr_trans; [by apply fr_pwb | apply fr_fence; by apply p_pwb_wf]. }
      assert (Hrep : ∀ b', 1 ≤ b' → hist (cas_null p2 b) b' = hist (pm s) b').
      { intros b' Hb'. unfold cas_null. case_decide; [rewrite hist_write_other by (unfold LOC; lia)|]; unfold p2; by rewrite hist_fence. }
      own_same s t Hi Ht; [done | |].
      + unfold cas_null. case_decide as Hc; [| by apply minv_fence, minv_pwb].
        apply minv_loc; [by apply minv_fence, minv_pwb | lia | done | intros _ ?; lia | done |].
        intros b' Hb' Hvb _. rewrite Hc in Hvb. simpl in Hvb. by subst b'.
      + apply (own_step (pm s)); [done | apply (m_nd _ _ _ Hm) | exact Hrep | exact Hti | done | ].
        unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. left. split; [done|]. right. exists b.
        split_and!; try done; try lia.
        * destruct Hfr as (_ & _ & Hpre & Hmk & _). by apply (durI_mono (pm s)).
        * intros k' Hk'. rewrite Hrep by lia. by apply Hn.
    - (* SD37 *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo & Hb & Hd & Hh). cbn [c37 fixed].
      own_same s t Hi Ht; [by apply fr_pwb | by apply minv_pwb |].
      apply (own_step (pm s)); [by apply fr_pwb | apply (m_nd _ _ _ Hm) | intros; done | exact Hti | done | ].
      unfold pcok. cbn [with_pc pc kk op mold]. split_and!; try done; try lia. right. simpl.
      replace 1 with (length (hist (pm s) b)) by (by rewrite Hh). left.
    - (* SD38 *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo & Hb & Hd & Hh & Hpw).
      assert (HbL : b < nlines (pm s)) by lia.
      set (p1 := p_fence (pm s) t).
      assert (Hwf1 : p_wf p1) by (by apply p_fence_wf).
      assert (HL1 : LOC < nlines p1) by (unfold p1; by rewrite nlines_fence).
      assert (HdD : durD p1 b).
      { destruct Hpw as [Hdd | Hin].
        - apply (durD_mono (pm s)); [done | unfold p1; by rewrite hist_fence | apply mk_fence | done].
        - split; [unfold p1; rewrite hist_fence, Hh; done|]. apply dur_fence_pwb; [done | done |]. by rewrite Hh. }
      set (p3 := cas_null p1 b).
      assert (Hwf3 : p_wf p3) by (unfold p3, cas_null; case_decide; [by apply p_write_wf | done]).
      assert (Hrep : ∀ b', 1 ≤ b' → hist (p_pwb id p3 t LOC) b' = hist (pm s) b').
      { intros b' Hb'. unfold p3, cas_null. rewrite (hist_pwb id). case_decide; [rewrite hist_write_other by (unfold LOC; lia)|]; unfold p1; by rewrite hist_fence. }
      assert (Hfr : fr (pm s) (p_pwb id p3 t LOC) t (kk (th s t)) (ins s)).
      { eapply fr_trans; [| by apply fr_pwb]. eapply fr_trans; [by apply fr_fence | by apply fr_cas_null]. }
      own_same s t Hi Ht; [done | |].
      + apply minv_pwb. unfold p3, cas_null. case_decide as Hc; [| by apply minv_fence].
        apply minv_loc; [by apply minv_fence | lia | done | intros _ ?; lia | done |].
        intros b' Hb' Hvb _. rewrite Hc in Hvb. simpl in Hvb. by subst b'.
      + apply (own_step (pm s)); [done | apply (m_nd _ _ _ Hm) | exact Hrep | exact Hti | done | ].
        unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. right. split_and!; try done; try lia.
        * destruct Hfr as (_ & _ & Hpre & Hmk & _). by apply (durI_mono (pm s)).
        * rewrite Hrep by lia. done.
        * apply (durD_mono p1); [by apply p_pwb_wf | | | done].
          -- rewrite Hrep by lia. unfold p1. by rewrite hist_fence.
          -- rewrite (mk_pwb id). unfold p3, cas_null. case_decide; [by rewrite mk_write | done].
    - (* SDRec *)
      subst T. start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. destruct Hp as (Hop & Hmo).
      own_same s t Hi Ht; [by apply fr_id | done |].
      destruct Hmo as [Hmo | (b & Hmo & Hb & Hd & Hn)]; rewrite Hmo.
      + apply (own_step (pm s)); [by apply fr_id | apply (m_nd _ _ _ Hm) | intros; done | exact Hti | done | ].
        unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. by rewrite Hmo.
      + case_decide as Hc.
        * assert (Hne : hist (pm s) b ≠ []).
          { apply (repl_nonempty NB (pm s) (ins s) b Hm Hb). intros E. rewrite E in Hc. simpl in Hc. unfold tr in Ht. lia. }
          destruct (repl_single NB (pm s) (ins s) b Hm Hb Hne) as (k & t' & Hh & Hvb & _).
          rewrite Hvb in Hc. simpl in Hc. subst t'.
          assert (k = kk (th s t)) as ->.
          { destruct (t_tag _ _ _ _ _ Hti b k Hb) as [Hlt | [-> _]]; [rewrite Hh; by left | | done].
            exfalso. apply (Hn k Hlt). rewrite Hh. by left. }
          apply (own_step (pm s)); [by apply fr_id | apply (m_nd _ _ _ Hm) | intros; done | exact Hti | done | ].
          unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. split_and!; try done; lia.
        * apply (own_step (pm s)); [by apply fr_id | apply (m_nd _ _ _ Hm) | intros; done | exact Hti | done | ].
          unfold pcok. cbn [with_pc pc kk op mold]. rewrite Hop. left. split; [done|]. right. exists b.
          split_and!; try done; try lia. intros k' Hk' Hin.
          destruct (decide (k' = kk (th s t))) as [->|Hk'']; [| apply (Hn k'); [lia | done]].
          destruct (repl_single NB (pm s) (ins s) b Hm Hb) as (k & t' & Hh & Hvb & _); [intros E; rewrite E in Hin; by apply elem_of_nil in Hin|].
          rewrite Hh in Hin. apply elem_of_list_singleton in Hin. injection Hin as <- <-. rewrite Hvb in Hc. done.
    - (* SIRecP *)
      start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp. done.
    - (* SCommit *)
      subst T. start s Hi Ht. unfold pcok in Hp. rewrite Hpc in Hp.
      assert (Hfr : fr (pm s) (p_fence (pm s) t) t (kk (th s t)) (ins s)) by (by apply fr_fence).
      own_same s t Hi Ht; [done | by apply minv_fence |].
      pose proof Hti as [Hl Hins Htag Hdone _].
      assert (HdI : ∀ n, durI (pm s) n → durI (p_fence (pm s) t) n).
      { intros n. apply (durI_mono (pm s)); [intros; by rewrite hist_fence | intros; apply mk_fence]. }
      constructor; cbn [kk res op mold pc].
      + rewrite app_length. simpl. lia.
      + intros n k Hk. left. destruct (Hins n k Hk) as [[Hlt [r' Hr']] | (-> & Hop & _)].
        * split; [lia|]. exists r'. by apply lookup_app_l_Some.
        * split; [lia|]. exists r. rewrite lookup_app_r, Hl, Nat.sub_diag, Hop by lia. done.
      + intros b k Hb Hin. rewrite hist_fence in Hin. destruct (Htag b k Hb Hin) as [?|(?&?)]; left; lia.
      + intros k o r' Hk. destruct (decide (k < kk (th s t))) as [Hlt | Hge].
        * rewrite lookup_app_l in Hk by lia. apply (own_done NB (pm s) _ (ins s) (ins s) t (th s t) Hfr (m_nd _ _ _ Hm)); [done | exact Hti | done].
        * rewrite lookup_app_r in Hk by lia. apply list_lookup_singleton_Some in Hk as [Hk0 Hk].
          injection Hk as <- <-. assert (k = kk (th s t)) as -> by lia.
          destruct (op (th s t)) as [n|] eqn:Eo; simpl.
          -- destruct Hp as (Hin & Hmo & Hd). split_and!; [done | |].
             ++ destruct Hd as [[-> Hd] | [-> Hn]]; [left; split; [done | by apply HdI] |].
                right. split; [done|]. by rewrite hist_fence.
             ++ intros b Hb Hin'. rewrite hist_fence in Hin'. destruct (Htag b _ Hb Hin') as [?|[_ Hmo']]; [lia|].
                rewrite Hmo in Hmo'. done.
          -- destruct Hp as [[-> Hm0] | (Hb & Hmo & Hd & Hh & Hdd)].
             ++ split; [| done]. intros b Hb Hin. rewrite hist_fence in Hin.
                destruct (Htag b _ Hb Hin) as [?|[_ Hmo]]; [lia|].
                destruct Hm0 as [Hm0 | (b' & Hm0 & _ & _ & Hn)]; rewrite Hm0 in Hmo; [done|].
                injection Hmo as ->. exfalso. apply (Hn (kk (th s t))); [lia | done].
             ++ split.
                ** intros b Hb' Hin. rewrite hist_fence in Hin. destruct (Htag b _ Hb' Hin) as [?|[_ Hmo']]; [lia|].
                   rewrite Hmo in Hmo'. by injection Hmo' as ->.
                ** intros _. split; [done|]. split; [rewrite hist_fence, Hh; by left|].
                   apply (durD_mono (pm s)); [by apply p_fence_wf | apply hist_fence | apply mk_fence | done].
      + unfold pcok. cbn [pc mold]. done.
    - (* STCrash *)
      start s Hi Ht.
      assert (Hfr : fr (pm s) (drop_pwbs (pm s) t) t (kk (th s t)) (ins s)) by (by apply fr_drop).
      own_same s t Hi Ht; [done | by apply minv_drop |].
      destruct (decide (pc (th s t) = PIdle)) as [E|E].
      + unfold crash_pc. rewrite E. pose proof Hti as [Hl Hins Htag Hdone Hp']. constructor; cbn [with_pc kk res op mold pc]; try done.
        * intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | done].
        * unfold pcok in Hp' |- *. rewrite E in Hp'. cbn [pc with_pc mold]. done.
      + apply (own_step (pm s)); [done | apply (m_nd _ _ _ Hm) | intros; done | exact Hti | | ].
        * unfold crash_pc. cbn [crl fixed]. destruct (pc (th s t)); try done; by destruct (op (th s t)).
        * apply (crash_target (pm s)); try done. intros b Hh. by apply one_nott.
    - (* SCrash *)
      pose proof (i_m _ _ _ Hi) as Hm. pose proof (m_nl _ _ _ Hm) as Hnl.
      assert (HL : LOC < nlines (pm s)) by (unfold LOC; lia).
      set (p' := crash_mem (pm s) keep).
      assert (Hh : ∀ L, L < nlines (pm s) → hist p' L = take (keep L) (hist (pm s) L)) by (intros; by apply crash_hist).
      assert (Hsub : ∀ L w, L < nlines (pm s) → w ∈ hist p' L → w ∈ hist (pm s) L).
      { intros L w HL' Hw. rewrite Hh in Hw by done. apply elem_of_take in Hw as (i & Hi' & _). by eapply elem_of_list_lookup_2. }
      assert (HdI : ∀ n, durI (pm s) n → durI p' n) by (intros; by apply durI_crash).
      assert (Hnt : ∀ t b kb, 1 ≤ b ≤ NB → nott (pm s) t b kb → nott p' t b kb).
      { intros t b kb Hb Hn k' Hk' Hin. apply (Hn k' Hk'). apply (Hsub b); [lia | done]. }
      constructor; cbn [pm ins th]; [by apply minv_crash | | apply (i_ins _ _ _ Hi) |].
      2: { intros b k u Hb Hin. apply (i_tag _ _ _ Hi b k u Hb). apply (Hsub b); [lia | done]. }
      intros u Hu. rewrite decide_True by done. pose proof (i_th _ _ _ Hi u Hu) as Hti.
      pose proof Hti as [Hl Hins Htag Hdone Hp].
      constructor; cbn [with_pc kk res op mold pc]; try done.
      + intros n k Hk. destruct (Hins n k Hk) as [?|(?&?&?)]; [by left | right; split_and!; try done].
        unfold crash_pc. destruct (pc (th s u)); try done; cbn [crl fixed]; by destruct (op (th s u)).
      + intros b k Hb Hin. apply Htag; [done | apply (Hsub b); [lia | done]].
      + intros k o r Hk. specialize (Hdone k o r Hk). destruct o as [n|]; simpl in *.
        * destruct Hdone as (Hin & Hd & Hnt'). split_and!; [done | |].
          -- destruct Hd as [[-> Hd] | [-> Hn]]; [left; auto | right; split; [done|]].
             intros Hin'. apply Hn. by apply (Hsub LOC).
          -- intros b Hb Hin'. apply (Hnt' b Hb). apply (Hsub b); [lia | done].
        * destruct Hdone as [Hr Hr0]. split.
          -- intros b Hb Hin. apply Hr; [done | apply (Hsub b); [lia | done]].
          -- intros Hr'. destruct (Hr0 Hr') as (Hb & Hin & Hdd). split; [done|].
             destruct (dur_crash (pm s) keep r Hok ltac:(lia) (proj2 Hdd)) as [_ Hhr].
             split; [unfold p'; by rewrite Hhr | by apply durD_crash; [| lia |]].
      + destruct (decide (pc (th s u) = PIdle)) as [E|E].
        * unfold crash_pc. rewrite E. unfold pcok in Hp |- *. rewrite E in Hp. cbn [with_pc pc mold]. done.
        * apply (crash_target (pm s)); try done.
          -- intros b kb Hn k' Hk' Hin. destruct (decide (1 ≤ b ≤ NB)) as [Hb|Hb].
             ++ by apply (Hnt u b kb Hb Hn k').
             ++ apply (Hn k' Hk'). destruct (decide (b < nlines (pm s))) as [HbL|HbL]; [by apply (Hsub b)|].
                unfold p', hist, line_hist, crash_mem in Hin. simpl in Hin.
                rewrite list_lookup_fmap, lookup_seq_ge in Hin by lia. by apply elem_of_nil in Hin.
          -- intros b Hhb k' Hk' Hin. destruct (decide (b < nlines (pm s))) as [HbL|HbL].
             ++ apply (Hsub b) in Hin; [| done]. rewrite Hhb in Hin. apply elem_of_list_singleton in Hin. injection Hin. lia.
             ++ unfold p', hist, line_hist, crash_mem in Hin. simpl in Hin.
                rewrite list_lookup_fmap, lookup_seq_ge in Hin by lia. by apply elem_of_nil in Hin.
  Qed.
End step_inv.

(** ** Theorems *)
Section theorems.
  Context (N NB : nat).
  Notation inv := (inv N NB).
  Notation reachable := (reachable N NB fixed).

  Lemma inv_init : inv (init NB).
  Proof.
    assert (He : ∀ L, hist (pmem_empty (S NB)) L = []) by apply hist_empty.
    constructor; cbn [pm ins th init].
    - constructor.
      + apply pmem_empty_wf.
      + unfold nlines. simpl. by rewrite replicate_length.
      + intros w Hw. rewrite He in Hw. by apply elem_of_nil in Hw.
      + intros b w _ Hw. rewrite He in Hw. by apply elem_of_nil in Hw.
      + intros b _. rewrite He. simpl. lia.
      + intros b _ Hw. rewrite He in Hw. by apply elem_of_nil in Hw.
      + intros b _ Hne. by rewrite He in Hne.
      + intros i j b w Hi. rewrite He in Hi. by rewrite lookup_nil in Hi.
      + intros i j n Hi. rewrite He in Hi. by rewrite lookup_nil in Hi.
      + constructor.
      + intros n t k Hin. by apply elem_of_nil in Hin.
    - intros t _. constructor; cbn [kk res op mold pc]; try done.
      + intros n k Hin. by apply elem_of_nil in Hin.
      + intros b k _ Hin. rewrite He in Hin. by apply elem_of_nil in Hin.
    - intros n t k Hin. by apply elem_of_nil in Hin.
    - intros b k t _ Hin. cbn [pm init] in Hin. rewrite He in Hin. by apply elem_of_nil in Hin.
  Qed.

  Lemma reachable_inv s : reachable s → inv s.
  Proof.
    unfold reachable. intros Hr. assert (∀ s1 s2, rtc (step N NB fixed) s1 s2 → inv s1 → inv s2) as Hgen.
    { intros s1 s2 H. induction H as [| s1 s1' s2 Hs _ IH]; [done |]. intros Hi. apply IH. by eapply step_inv. }
    apply (Hgen (init NB)); [done | apply inv_init].
  Qed.

  (** (a) Detectability: at every reachable state (any schedule, any number
      of full and thread crashes, with helping), every committed INSERT of
      [n] returned OK (1) iff its persist-bit write is in [LOC]'s history,
      ERR (0) iff it is not, and an OK's write is under the mark; every
      committed DELETE returned the block [b] iff its [repl] write is in
      [b]'s history (and nowhere else), ERR or empty (0) iff it wrote none,
      and a returned block's [repl] write is durable. *)
  Theorem insdel_px_detectable s t k o r : reachable s → tr N t → res (th s t) !! k = Some (o, r) →
    match o with
    | Some n => (r = 1 ↔ effI s n) ∧ (r = 0 ↔ ¬ effI s n) ∧ (r = 1 → durI (pm s) n)
    | None => (∀ b, 1 ≤ b ≤ NB → (effD s t k b ↔ r = b)) ∧ (r ≠ 0 → 1 ≤ r ≤ NB ∧ durD (pm s) r)
    end.
  Proof.
    intros Hr Ht Hk. pose proof (reachable_inv s Hr) as Hi.
    pose proof (t_done _ _ _ _ _ (i_th _ _ _ Hi t Ht) k o r Hk) as Hd. destruct o as [n|]; simpl in Hd.
    - assert (HdE : durI (pm s) n → effI s n).
      { intros (i & Hi' & _). unfold effI. by eapply elem_of_list_lookup_2. }
      destruct Hd as (_ & [[-> Hdi] | [-> Hn]] & _).
      + split_and!; [split; [intros _; by apply HdE | done] | split; [done | intros Hne; exfalso; apply Hne; by apply HdE] | done].
      + split_and!; [split; [done | intros He; by exfalso] | split; [intros _; done | done] | done].
    - destruct Hd as [Hr1 Hr0]. split.
      + intros b Hb. split; [by apply Hr1 | intros <-]. destruct (Hr0 ltac:(lia)) as (_ & Hin & _). done.
      + intros Hne. destruct (Hr0 Hne) as (Hb & _ & Hdd). done.
  Qed.

  (** (b) At most once: a block's [repl] word is written at most once in its
      history (one DELETE commits it), and each INSERT's persist-bit write
      is at most once in [LOC]'s. *)
  Theorem insdel_px_at_most_once s : reachable s →
    (∀ b, 1 ≤ b ≤ NB → length (hist (pm s) b) ≤ 1) ∧
    (∀ i j n, hist (pm s) LOC !! i = Some [(1, n)] → hist (pm s) LOC !! j = Some [(1, n)] → i = j).
  Proof.
    intros Hr. pose proof (i_m _ _ _ (reachable_inv s Hr)) as Hm. split; [apply (m_r1 _ _ _ Hm) | apply (m_U _ _ _ Hm)].
  Qed.

  (** (c) §4.1's invariant (link and persist): a clean word of [LOC] naming a
      block -- what LOAD returns -- has that block's insert under the mark;
      and a block whose [repl] is set was inserted durably. *)
  Theorem insdel_px_link_and_persist s b : reachable s → 1 ≤ b →
    ((visp (pm s) LOC = (0, b) → durI (pm s) b) ∧ (b ≤ NB → hist (pm s) b ≠ [] → durI (pm s) b)).
  Proof.
    intros Hr Hb. pose proof (i_m _ _ _ (reachable_inv s Hr)) as Hm. split.
    - intros Hv. apply (m_A _ _ _ Hm b Hb). destruct (loc_last NB (pm s) (ins s) 0 b Hm Hv) as [h ->]; [intros E; injection E; lia|].
      apply elem_of_app. right. by left.
    - intros HbN Hne. by apply (m_B _ _ _ Hm b).
  Qed.
End theorems.
