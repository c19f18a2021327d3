(** * RELAX's recoverField on Px86's line-granular persistence: Findings R1 and R2

    The model of [RecoverField.v] (seed 002, §6.3.1, Algorithm 6.2
    [RecoverField], run by any number of threads on one [patomic] field P,
    with Mirror's writers and crashes) re-founded on [Core/PxPersist.v]:
    P's NVMM pair is one 16-byte word (value word [VAL], sequence word
    [SEQ]) in one cache line, held as the line's sequence of visible
    writes and its mark; a write persists for sure only through a [pwb]
    its thread later fences; a crash ([st_crash]) keeps any prefix of the
    line's writes at least as long as its mark ([p_crash_ok]: every image
    Px86 allows) and leaves DRAM arbitrary.  It justifies
    [specs/relax/RelaxRecoverField.tla] (whose switches [Revalidate] and
    [RFFlush] are [reread] and [flush] here) and [Space::recover_field] of
    [impl/perdure-relax/src/patomic.rs].  It supersedes [RecoverField.v],
    which takes persistence as immediate and so cannot state Finding R1.

    The steps ([pstep]), each one atomic, each with the seed's line and the
    Rust function (file:function) it abstracts:
    - [st_line1]: line 1, read DRAM's pair (patomic.rs:Space::recover_attempt,
      via dram.rs:Dram::read_pair);
    - [st_line2]: line 2, read NVMM's visible pair, one 16-byte read
      (patomic.rs:Space::read_nvmm, called by Space::recover_attempt);
    - [st_line3]: line 3, the pairs are equal: return
      (Space::recover_attempt's [Attempt::Equal], Space::recover_field returns);
    - [st_reread_fail] (only with [reread], the fix of R2): after line 3,
      DRAM is read again and differs from line 1's pair: goto 1
      (Space::recover_attempt's re-read, [Attempt::Retry]);
    - [st_line4] / [st_line4_skip]: the re-read found line 1's pair (with
      [reread]) and line 4's window test is true / false
      (patomic.rs:Space::in_window); false leads to [st_pwb] with [flush],
      to line 5 without;
    - [st_line41_ok] / [st_line41_fail]: lines 4.1–4.2, an 8-byte CAS of
      NVMM's sequence word from [S_NV] to [S_D + 1]: one write of the line,
      not written back; on failure goto 1 (Space::recover_attempt's
      [compare_exchange] on the word at [off + 8]);
    - [st_pwb], [st_fence] (only with [flush], the fix of R1): the thread's
      [pwb] of P's line and its [pfence] (Space::recover_attempt's
      [self.pool.pwb(off, 16)] and [self.pool.pfence()]);
    - [st_line5_ok] / [st_line5_fail]: line 5, DWCAS of DRAM from line 1's
      pair to the NVMM pair read: return / goto 1
      (patomic.rs:Space::recover_field, via dram.rs:Dram::dwcas);
    - [st_write]: a Mirror CAS, Algorithm 4.1 L5–L40, its reads and its
      NVMM DWCAS as one step, enabled when the sequence numbers are equal:
      one write of the line, persisting atomically, not written back
      (patomic.rs:Space::mirror_cas, [nvmm.compare_exchange]);
    - [st_help]: Mirror's copy of NVMM to DRAM with the write-back and
      fence before it, L19–L24 (helping) or L41–L44 (the writer's own), as
      one step (Space::mirror_cas: [pwb], [pfence], Dram::dwcas);
    - [st_crash]: a full-system crash: NVMM keeps an image of the line,
      DRAM becomes any pair, no thread is inside [recoverField] and the
      field is not recovered (space.rs:Space::open, dram.rs:Dram::new with
      [DramInit::Garbage]).
    Mirror's writers run only once [recovered] holds, i.e. after some
    [recoverField] on P returned (Claim 1, [Relax/Tracking.v]);
    [recoverField] may start at any time, also after that (the relaxed
    tracking of the TLA+ model).  The stall bound of Claim 2 restricts the
    schedule as in [RecoverField.v]: a thread takes lines 2–5 only while
    fewer than [2^(k−1)] writes to NVMM's line happened since its line 1
    (its write-back and fence are not restricted).  A run starts in any
    state right after a crash ([post_crash]).

    Method: a simulation.  Every reachable state is related ([rel]) to a
    reachable state of [RecoverField.v]'s model with the same visible NVMM
    pair, DRAM pair, program counters and count of NVMM writes
    ([sim_reachable]); a write-back and a fence are stuttering steps of
    that model, a crash leads to one of its initial states.  Claim 2 is a
    statement about visible pairs and transfers.  Durability rests on an
    invariant of its own ([pdur]): after the first return, NVMM's [i]-th
    version (the ghost numbering of [RecoverField.v]) is what the line
    holds after its first [i + 1] writes; DRAM's version is within the
    line's mark; a thread between its write-back and line 5 holds a pair
    whose version its pending write-back, or the mark, covers.

    Proved, for every [k ≥ 2], either end point of the window, any number
    of threads and any number of crashes:
    - [px_claim2_mirror_invariants] (with [reread], either [flush]): once
      some [recoverField] on P returned, Mirror's first invariant and
      equal-seqs-equal-values hold (TLA+ [MirrorInvariants]);
    - [px_claim2_nvmm_changes_only_when_seqs_equal]: Mirror's second
      invariant, a step between two recovered states that changes NVMM
      starts from equal sequence numbers ([NvmmChangesOnlyWhenEqual]);
    - [px_dram_persisted] (both fixes): once recovered, DRAM's pair is what
      NVMM held after a prefix of its line no longer than the line's mark,
      so every crash keeps it or a later pair;
    - [px_crash_keeps_dram_or_nvmm] (both fixes): once recovered, every
      crash image of NVMM is DRAM's pair or NVMM's visible pair (the update
      in flight, which may take effect at the crash): no reader has seen a
      value a crash can lose (the persistence condition of TLA+
      [AbsMatchesMemory] and [Refinement]);
    - [px_r1_as_written_loses_dram] (Finding R1; without [flush], either
      [reread]): an execution of 8 steps after which DRAM and NVMM show
      (1, 1) while a crash may keep NVMM's line at (0, 0), and the crash
      step to NVMM (0, 0); it breaks the conclusions of [px_dram_persisted]
      and [px_crash_keeps_dram_or_nvmm];
    - [px_r2_as_written_breaks_claim2] (Finding R2; without [reread],
      either [flush]): an execution of 12 (with [flush]) or 10 steps after
      which the field is recovered, NVMM was written twice since the crash
      and Mirror's first invariant fails.

    What the model abstracts:
    - one field, alone in its line: the writes of other fields sharing the
      line, and their write-backs, only interleave with P's (a crash image
      of the real line keeps a prefix of P's writes at least as long as
      this model's mark);
    - Mirror's CAS as two steps (reads and NVMM DWCAS; write-back, fence
      and DRAM DWCAS), its expected-value test, failure paths and the fixes
      M1 and M2 (see [Relax/MirrorCas.v] for a crash-free spec); its
      write-back takes effect only at the DRAM copy here, so this model
      allows every crash image the real order allows, and more;
    - sequentially consistent steps (every write is a locked RMW, so TSO
      adds nothing): line 2 is one atomic 16-byte read (Space::read_nvmm
      reads sequence, value, sequence and retries); a 16-byte DWCAS on NVMM
      persists atomically (the assumption PX86.md asks for); where the
      16-byte CAS is emulated, Rust's line 4.1 is a 16-byte CAS of the pair
      (it succeeds in fewer cases, with the same write);
    - a [pwb] records the line's length when issued and has taken effect by
      the thread's next fence, the reading of [PxPersist.v];
    - NVMM words are naturals ([Px86.v]), DRAM words and registers integers,
      sequence numbers modulo [2^k];
    - Algorithm 6.3 (Space::recover_field_ptr, marked pointers),
      Algorithm 6.4, the batch of Space::recover_fields (each field runs the
      same steps; several write-backs share one fence), the tracking
      variants, memory management;
    - histories: the refinement of the durable register (TLA+
      [Refinement]) is not proved; durability is stated on crash images;
    - liveness (the stall bound is a safety restriction only). *)
From stdpp Require Import base list.
From Coq Require Import ZArith Lia.
From perdure.Core Require Import Px86 PxPersist.
From perdure.Relax Require RecoverField.
Module RF := RecoverField.

(** ** P's NVMM line *)

(** The value word and the sequence word of P's 16-byte NVMM pair, both in
    line 0. *)
Definition VAL : nat := 0.
Definition SEQ : nat := 1.
Definition fline : nat → nat := λ _, 0%nat.

(** The pair after a sequence of writes of the line. *)
Definition pair_of (ws : list write) : RF.cell :=
  (Z.of_nat (seq_val VAL ws), Z.of_nat (seq_val SEQ ws)).

Lemma mjoin_snoc (ws : list write) (w : write) : mjoin (ws ++ [w]) = mjoin ws ++ w.
Proof. induction ws as [|w' ws IH]; simpl; [by rewrite app_nil_r|]. by rewrite IH, app_assoc. Qed.

Lemma seq_val_snoc x ws w :
  seq_val x (ws ++ [w]) = foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) (seq_val x ws) w.
Proof. unfold seq_val. by rewrite mjoin_snoc, foldl_app. Qed.

Lemma pair_of_dwcas ws v q : pair_of (ws ++ [[(VAL, v); (SEQ, q)]]) = (Z.of_nat v, Z.of_nat q).
Proof. unfold pair_of. rewrite !seq_val_snoc. reflexivity. Qed.

Lemma pair_of_seqw ws q : pair_of (ws ++ [[(SEQ, q)]]) = (fst (pair_of ws), Z.of_nat q).
Proof. unfold pair_of. rewrite !seq_val_snoc. reflexivity. Qed.

(** NVMM right after a crash that kept the pair [(v, q)]: one write, under
    the mark (a second crash keeps it), no write-back pending. *)
Definition crash_pmem (v q : nat) : pmem := PMem (Mem [[[(VAL, v); (SEQ, q)]]] [1%nat]) [].

Lemma hist_p_write p x w :
  length (m_lines (p_mem p)) = 1%nat →
  line_hist (p_mem (p_write p (fline x) w)) 0 = line_hist (p_mem p) 0 ++ [w].
Proof.
  intros Hl. destruct p as [[ls ms] pw]. unfold line_hist, p_write, mem_write; simpl in *.
  destruct ls as [|h [|]]; simpl in *; try lia. reflexivity.
Qed.

(** ** The model *)

(** A thread's position in [recoverField] and its registers: line 1's
    DRAM pair [(vd, sd)], line 2's NVMM pair [(vn, sn)], and [t0], the
    count of NVMM writes at its line 1 (read by the stall bound only). *)
Inductive prstate : Type :=
| PIdle                            (* outside recoverField, or at line 1 *)
| PL2 (vd sd t0 : Z)               (* line 1 done *)
| PV (vd sd vn sn t0 : Z)          (* line 2 done *)
| PL41 (vd sd vn sn t0 : Z)        (* about to CAS at line 4.1 *)
| PPwb (vd sd vn sn t0 : Z)        (* the fix of R1: about to write back *)
| PFence (vd sd vn sn t0 : Z)      (* the fix of R1: about to fence *)
| PL5 (vd sd vn sn t0 : Z).        (* about to DWCAS at line 5 *)

Record pstate : Type := PSt {
  nvmm : pmem;              (* P's line: its visible writes, its mark, pending write-backs *)
  dram : RF.cell;           (* DRAM(P) *)
  recovered : bool;         (* some recoverField on P returned since the crash *)
  rs : nat → prstate;       (* the threads *)
}.

Definition upd_rs (f : nat → prstate) (t : nat) (r : prstate) : nat → prstate :=
  λ t', if Nat.eqb t' t then r else f t'.

Definition set_rs (s : pstate) (t : nat) (r : prstate) : pstate :=
  PSt (nvmm s) (dram s) (recovered s) (upd_rs (rs s) t r).

(** The line's writes since the crash (the first is the crash image), its
    mark, the count of writes to NVMM since the crash, the visible pair,
    the pair after the first [n] writes, the pair of version [c] (after
    [c + 1] writes), and the pair a crash keeping [keep] leaves. *)
Definition line_writes (s : pstate) : list write := line_hist (p_mem (nvmm s)) 0.
Definition line_mark (s : pstate) : nat := mark (p_mem (nvmm s)) 0.
Definition nv_mods (s : pstate) : Z := (Z.of_nat (length (line_writes s)) - 1)%Z.
Definition nv_pair (s : pstate) : RF.cell :=
  (Z.of_nat (p_load fline (nvmm s) VAL), Z.of_nat (p_load fline (nvmm s) SEQ)).
Definition pair_after (s : pstate) (n : nat) : RF.cell := pair_of (take n (line_writes s)).
Definition version (s : pstate) (c : Z) : RF.cell := pair_after s (S (Z.to_nat c)).
Definition crash_image (s : pstate) (keep : nat → nat) : RF.cell :=
  (Z.of_nat (p_image fline (nvmm s) keep VAL), Z.of_nat (p_image fline (nvmm s) keep SEQ)).

Lemma nv_pair_after s : nv_pair s = pair_after s (length (line_writes s)).
Proof. unfold pair_after. rewrite take_ge by lia. reflexivity. Qed.

Lemma crash_image_after s keep : crash_image s keep = pair_after s (keep 0%nat).
Proof. reflexivity. Qed.

(** A thread's position in [RecoverField.v]'s model: its write-back and
    fence are not there. *)
Definition proj (r : prstate) : RF.rstate :=
  match r with
  | PIdle => RF.RIdle
  | PL2 vd sd t0 => RF.RL2 vd sd t0
  | PV vd sd vn sn t0 => RF.RV vd sd vn sn t0
  | PL41 vd sd vn sn t0 => RF.RL41 vd sd vn sn t0
  | PPwb vd sd vn sn t0 | PFence vd sd vn sn t0 | PL5 vd sd vn sn t0 => RF.RL5 vd sd vn sn t0
  end.

Section px.
  Context (k : Z) (Hk : (2 <= k)%Z) (strict : bool).
  Local Open Scope Z_scope.
  Local Notation M := (RF.M k).
  Local Notation half := (RF.half k).

  (** Where line 4 leads: the write-back of R1's fix, or line 5. *)
  Definition after4 (flush : bool) (vd sd vn sn t0 : Z) : prstate :=
    if flush then PPwb vd sd vn sn t0 else PL5 vd sd vn sn t0.

  (** [reread]: the fix of R2 (DRAM read again after line 3); [flush]: the
      fix of R1 (write-back and fence before line 5).  Both false is
      Algorithm 6.2 as published; both true is [Space::recover_field].  The
      window's end point is [RF.wtop k strict] ([strict]: [< 2^(k−1)] as in
      Chapter 7, else [≤ 2^(k−1)] as in Algorithm 6.2 and the Rust code). *)
  Inductive pstep (reread flush : bool) : pstate → pstate → Prop :=
  (* line 1: read (V_D, S_D) from DRAM (Space::recover_attempt, Dram::read_pair) *)
  | st_line1 s t :
      rs s t = PIdle →
      pstep reread flush s (set_rs s t (PL2 (fst (dram s)) (snd (dram s)) (nv_mods s)))
  (* line 2: read (V_NV, S_NV) from NVMM (Space::read_nvmm) *)
  | st_line2 s t vd sd t0 :
      rs s t = PL2 vd sd t0 → nv_mods s - t0 < half →
      pstep reread flush s (set_rs s t (PV vd sd (fst (nv_pair s)) (snd (nv_pair s)) t0))
  (* line 3: equal pairs: return (Space::recover_attempt, Attempt::Equal) *)
  | st_line3 s t vd sd vn sn t0 :
      rs s t = PV vd sd vn sn t0 → nv_mods s - t0 < half → (vn, sn) = (vd, sd) →
      pstep reread flush s (PSt (nvmm s) (dram s) true (upd_rs (rs s) t PIdle))
  (* R2's fix: DRAM read again, changed since line 1: goto 1 (Space::recover_attempt) *)
  | st_reread_fail s t vd sd vn sn t0 :
      reread = true → rs s t = PV vd sd vn sn t0 → nv_mods s - t0 < half →
      (vn, sn) ≠ (vd, sd) → dram s ≠ (vd, sd) →
      pstep reread flush s (set_rs s t PIdle)
  (* [R2's re-read, unchanged, then] line 4, in the window: to line 4.1 (Space::in_window) *)
  | st_line4 s t vd sd vn sn t0 :
      rs s t = PV vd sd vn sn t0 → nv_mods s - t0 < half →
      (reread = true → dram s = (vd, sd)) → (vn, sn) ≠ (vd, sd) → RF.window k strict sd sn →
      pstep reread flush s (set_rs s t (PL41 vd sd vn sn t0))
  (* [R2's re-read, unchanged, then] line 4, outside the window: to [R1's write-back or] line 5 *)
  | st_line4_skip s t vd sd vn sn t0 :
      rs s t = PV vd sd vn sn t0 → nv_mods s - t0 < half →
      (reread = true → dram s = (vd, sd)) → (vn, sn) ≠ (vd, sd) → ¬ RF.window k strict sd sn →
      pstep reread flush s (set_rs s t (after4 flush vd sd vn sn t0))
  (* lines 4.1–4.2: CAS(NVMM.seq, S_NV, S_D + 1) succeeds: one write of the line
     (Space::recover_attempt, compare_exchange of the word at off + 8) *)
  | st_line41_ok s t vd sd vn sn t0 q :
      rs s t = PL41 vd sd vn sn t0 → nv_mods s - t0 < half → snd (nv_pair s) = sn →
      Z.of_nat q = (sd + 1) mod M →
      pstep reread flush s (PSt (p_write (nvmm s) (fline SEQ) [(SEQ, q)]) (dram s) (recovered s)
                       (upd_rs (rs s) t (after4 flush vd sd vn (Z.of_nat q) t0)))
  (* line 4.1's CAS fails: goto 1 *)
  | st_line41_fail s t vd sd vn sn t0 :
      rs s t = PL41 vd sd vn sn t0 → nv_mods s - t0 < half → snd (nv_pair s) ≠ sn →
      pstep reread flush s (set_rs s t PIdle)
  (* R1's fix: FLUSH(NVMM(address)) (Space::recover_attempt, pool.pwb) *)
  | st_pwb s t vd sd vn sn t0 :
      rs s t = PPwb vd sd vn sn t0 →
      pstep reread flush s (PSt (p_pwb fline (nvmm s) t VAL) (dram s) (recovered s)
                       (upd_rs (rs s) t (PFence vd sd vn sn t0)))
  (* R1's fix: FENCE (Space::recover_attempt, pool.pfence) *)
  | st_fence s t vd sd vn sn t0 :
      rs s t = PFence vd sd vn sn t0 →
      pstep reread flush s (PSt (p_fence (nvmm s) t) (dram s) (recovered s)
                       (upd_rs (rs s) t (PL5 vd sd vn sn t0)))
  (* line 5: DWCAS(DRAM, (V_D, S_D), (V_NV, S_NV)) succeeds: return
     (Space::recover_field, Dram::dwcas) *)
  | st_line5_ok s t vd sd vn sn t0 :
      rs s t = PL5 vd sd vn sn t0 → nv_mods s - t0 < half → dram s = (vd, sd) →
      pstep reread flush s (PSt (nvmm s) (vn, sn) true (upd_rs (rs s) t PIdle))
  (* line 5's DWCAS fails: goto 1 *)
  | st_line5_fail s t vd sd vn sn t0 :
      rs s t = PL5 vd sd vn sn t0 → nv_mods s - t0 < half → dram s ≠ (vd, sd) →
      pstep reread flush s (set_rs s t PIdle)
  (* Algorithm 4.1 L5–L40: a Mirror CAS's NVMM DWCAS (Space::mirror_cas) *)
  | st_write s v q :
      recovered s = true → snd (nv_pair s) = snd (dram s) → Z.of_nat q = (snd (nv_pair s) + 1) mod M →
      pstep reread flush s (PSt (p_write (nvmm s) (fline VAL) [(VAL, v); (SEQ, q)]) (dram s) true (rs s))
  (* Algorithm 4.1 L19–L24 or L41–L44: FLUSH, FENCE, DRAM DWCAS (Space::mirror_cas) *)
  | st_help s w :
      recovered s = true → snd (nv_pair s) = (snd (dram s) + 1) mod M →
      pstep reread flush s (PSt (p_fence (p_pwb fline (nvmm s) w VAL) w) (nv_pair s) true (rs s))
  (* a crash: NVMM keeps an image Px86 allows, DRAM becomes any pair d (Space::open) *)
  | st_crash s keep d :
      p_crash_ok (nvmm s) keep → RF.in_range k (snd d) →
      pstep reread flush s
        (PSt (crash_pmem (p_image fline (nvmm s) keep VAL) (p_image fline (nvmm s) keep SEQ))
             d false (λ _, PIdle)).

  (** Right after a crash: any NVMM pair (persisted), any DRAM pair,
      sequence numbers k-bit words. *)
  Definition post_crash (s : pstate) : Prop :=
    (∃ v q, nvmm s = crash_pmem v q ∧ Z.of_nat q < M) ∧ recovered s = false ∧
    (∀ t, rs s t = PIdle) ∧ RF.in_range k (snd (dram s)).

  Inductive preachable (reread flush : bool) : pstate → Prop :=
  | preach_init s : post_crash s → preachable reread flush s
  | preach_step s s' : preachable reread flush s → pstep reread flush s s' → preachable reread flush s'.

  (** Evaluating the concrete states of the executions below. *)
  Ltac pcomp := unfold nv_mods, line_writes, nv_pair, line_mark, pair_after, version, crash_image, pair_of;
    cbn -[RF.half RF.M]; unfold VAL, SEQ, fline, decide, decide_rel in *; cbn -[RF.half RF.M].
  Ltac pg := pcomp; lia.
  Ltac cur R := match type of R with preachable _ _ ?x => x end.
  Ltac norm R := cbv -[RF.M RF.half] in R.

  (** ** The simulation of [RecoverField.v]'s model, and the invariant of durability *)

  Lemma cell_dec (x y : RF.cell) : {x = y} + {x ≠ y}.
  Proof. decide equality; apply Z.eq_dec. Qed.

  Lemma M_facts : 2 <= half ∧ M = 2 * half.
  Proof. split; [apply (RF.half_ge_2 k Hk)|apply (RF.M_is_twice_half k Hk)]. Qed.

  (** [o] shows what [s] shows: visible NVMM pair, DRAM pair, program
      counters, count of NVMM writes. *)
  Definition rel (s : pstate) (o : RF.state) : Prop :=
    RF.nv o = nv_pair s ∧ RF.dr o = dram s ∧ RF.recovered o = recovered s ∧
    (∀ t, RF.rs o t = proj (rs s t)) ∧ RF.mods o = nv_mods s.

  (** One line, well formed, the crash image under its mark, every
      sequence number a k-bit word; the first write is [o]'s post-crash
      NVMM pair. *)
  Definition pwell (s : pstate) (o : RF.state) : Prop :=
    p_wf (nvmm s) ∧ length (m_lines (p_mem (nvmm s))) = 1%nat ∧ (1 <= line_mark s)%nat ∧
    (∀ n, snd (pair_after s n) < M) ∧ pair_after s 1 = RF.n0 o.

  (** A thread's line-1 read: a thread that read DRAM before the first
      return read the post-crash DRAM. *)
  Definition dram_ok (s : pstate) (o : RF.state) (vd sd t0 : Z) : Prop :=
    0 <= t0 <= nv_mods s ∧ ((recovered s = false ∨ t0 < RF.mrec o) → (vd, sd) = RF.d0 o).

  (** A thread's line-2 read (or line 4.1's write): a version written
      since its line 1. *)
  Definition read_ok (s : pstate) (t0 vn sn : Z) : Prop :=
    ∃ c, t0 <= c <= nv_mods s ∧ version s c = (vn, sn).

  (** What thread [t] at [r] holds. *)
  Definition pthread_ok (s : pstate) (o : RF.state) (t : nat) (r : prstate) : Prop :=
    match r with
    | PIdle => True
    | PL2 vd sd t0 => dram_ok s o vd sd t0
    | PV vd sd vn sn t0 | PL41 vd sd vn sn t0 | PPwb vd sd vn sn t0 =>
        dram_ok s o vd sd t0 ∧ read_ok s t0 vn sn
    | PFence vd sd vn sn t0 =>
        dram_ok s o vd sd t0 ∧
        ∃ c n, t0 <= c <= nv_mods s ∧ version s c = (vn, sn) ∧ (S (Z.to_nat c) <= n)%nat ∧
          ((t, 0%nat, n) ∈ p_pwbs (nvmm s) ∨ (n <= line_mark s)%nat)
    | PL5 vd sd vn sn t0 =>
        dram_ok s o vd sd t0 ∧
        ∃ c, t0 <= c <= nv_mods s ∧ version s c = (vn, sn) ∧ (S (Z.to_nat c) <= line_mark s)%nat
    end.

  (** The invariant of durability (with both fixes): after the first
      return, NVMM's versions in [o]'s numbering are the line's prefixes,
      DRAM's version is under the mark, and if NVMM was written before the
      first return, the pair it recovered is not the post-crash DRAM pair;
      a thread at its fence holds a version its pending write-back or the
      mark covers, a thread at line 5 one the mark covers. *)
  Definition pdur (s : pstate) (o : RF.state) : Prop :=
    (recovered s = true →
       0 <= RF.mrec o ∧
       (∀ i, RF.mrec o <= i <= nv_mods s → version s i = RF.rcell k o i) ∧
       RF.dv o + 1 <= Z.of_nat (line_mark s) ∧
       (0 < RF.mrec o → RF.d0 o ≠ RF.rcell k o (RF.mrec o))) ∧
    ∀ t, pthread_ok s o t (rs s t).

  (** [s] is simulated by the reachable [o]. *)
  Definition sim_ok (reread flush : bool) (s : pstate) (o : RF.state) : Prop :=
    RF.reachable k strict reread o ∧ rel s o ∧ pwell s o ∧ (reread = true → flush = true → pdur s o).

  (** *** Bookkeeping *)

  Lemma pair_eta_Z (c : RF.cell) : (fst c, snd c) = c.
  Proof. by destruct c. Qed.

  Lemma nv_pair_writes s : nv_pair s = pair_of (line_writes s).
  Proof. reflexivity. Qed.

  Lemma pwell_len s o :
    pwell s o → (1 <= length (line_writes s))%nat ∧ (line_mark s <= length (line_writes s))%nat.
  Proof.
    intros ((_ & Hle & _) & _ & Hm & _). specialize (Hle 0%nat). unfold line_mark, line_writes in *. lia.
  Qed.

  Lemma nv_mods_nonneg s o : pwell s o → 0 <= nv_mods s.
  Proof. intros Hw. destruct (pwell_len s o Hw). unfold nv_mods. lia. Qed.

  Lemma version_top s o : pwell s o → version s (nv_mods s) = nv_pair s.
  Proof.
    intros Hw. destruct (pwell_len s o Hw) as [Hl _]. unfold version, nv_mods. rewrite nv_pair_after. f_equal. lia.
  Qed.

  Lemma version_app s s' ws c :
    line_writes s' = line_writes s ++ ws → 0 <= c <= nv_mods s → version s' c = version s c.
  Proof.
    intros E Hc. unfold version, pair_after. rewrite E, take_app_le; [reflexivity|]. unfold nv_mods in Hc. lia.
  Qed.

  Lemma pthread_ok_mono s s' o o' t r :
    (∀ vd sd t0, dram_ok s o vd sd t0 → dram_ok s' o' vd sd t0) →
    nv_mods s <= nv_mods s' →
    (∀ c, 0 <= c <= nv_mods s → version s' c = version s c) →
    (line_mark s <= line_mark s')%nat →
    (∀ n, (t, 0%nat, n) ∈ p_pwbs (nvmm s) ∨ (n <= line_mark s)%nat →
          (t, 0%nat, n) ∈ p_pwbs (nvmm s') ∨ (n <= line_mark s')%nat) →
    pthread_ok s o t r → pthread_ok s' o' t r.
  Proof.
    intros Hd Hm Hv Hmk Hp.
    destruct r as [|vd sd t0|vd sd vn sn t0|vd sd vn sn t0|vd sd vn sn t0|vd sd vn sn t0|vd sd vn sn t0];
      simpl; [done|apply Hd| | | | |].
    1-3: intros [HD (c & Hc & E)]; pose proof HD as (Ht0 & _); split; [by apply Hd|];
         exists c; rewrite Hv by lia; split; [lia|done].
    - intros [HD (c & n & Hc & E & Hn & Hpn)]. pose proof HD as (Ht0 & _). split; [by apply Hd|].
      exists c, n. rewrite Hv by lia. split; [lia|]. split; [done|]. split; [done|]. by apply Hp.
    - intros [HD (c & Hc & E & Hn)]. pose proof HD as (Ht0 & _). split; [by apply Hd|].
      exists c. rewrite Hv by lia. split; [lia|]. split; [done|]. lia.
  Qed.

  Lemma dram_ok_same s s' o o' vd sd t0 :
    recovered s' = recovered s → RF.mrec o' = RF.mrec o → RF.d0 o' = RF.d0 o →
    nv_mods s <= nv_mods s' → dram_ok s o vd sd t0 → dram_ok s' o' vd sd t0.
  Proof.
    intros H1 H2 H3 H4 (Ht & He). split; [lia|]. rewrite H1, H2, H3. exact He.
  Qed.

  Lemma dram_ok_first s s' o o' vd sd t0 :
    recovered s = false → RF.d0 o' = RF.d0 o → nv_mods s' = nv_mods s →
    dram_ok s o vd sd t0 → dram_ok s' o' vd sd t0.
  Proof.
    intros H1 H3 H4 (Ht & He). split; [lia|]. intros _. rewrite H3. apply He. by left.
  Qed.

  Lemma fence_pending p w t n :
    p_wf p → length (m_lines (p_mem p)) = 1%nat →
    (t, 0%nat, n) ∈ p_pwbs p ∨ (n <= mark (p_mem p) 0)%nat →
    (t ≠ w ∧ (t, 0%nat, n) ∈ p_pwbs (p_fence p w)) ∨ (n <= mark (p_mem (p_fence p w)) 0)%nat.
  Proof.
    intros Hwf Hl [Hin|Hn].
    - destruct (decide (t = w)) as [->|Hne].
      + right. apply p_fence_covers; [done|done|lia].
      + left. split; [done|]. unfold p_fence; simpl. apply elem_of_list_filter. done.
    - right. etrans; [exact Hn|apply p_fence_mark_mono].
  Qed.

  Lemma fence_lines p w : length (m_lines (p_mem (p_fence p w))) = length (m_lines (p_mem p)).
  Proof. unfold p_fence; simpl. by rewrite foldr_fence_lines. Qed.

  Lemma rel_set s o t r : rel s o → rel (set_rs s t r) (RF.set_rs o t (proj r)).
  Proof.
    intros (H1 & H2 & H3 & H4 & H5). split; [exact H1|]. split; [exact H2|]. split; [exact H3|].
    split; [|exact H5]. intros t'. simpl. unfold RF.upd, upd_rs. destruct (Nat.eqb t' t); [reflexivity|apply H4].
  Qed.

  Lemma rs_upd o s t r :
    (∀ t', RF.rs o t' = proj (rs s t')) →
    ∀ t', RF.upd (RF.rs o) t (proj r) t' = proj (upd_rs (rs s) t r t').
  Proof. intros H t'. unfold RF.upd, upd_rs. destruct (Nat.eqb t' t); [reflexivity|apply H]. Qed.

  (** A step of one thread's program counter only. *)
  Lemma sim_set reread flush s o t r :
    sim_ok reread flush s o → RF.step k strict reread o (RF.set_rs o t (proj r)) →
    (reread = true → flush = true → pthread_ok s o t r) →
    sim_ok reread flush (set_rs s t r) (RF.set_rs o t (proj r)).
  Proof.
    intros (Ho & Hr & Hw & Hd) Hstep Ht. split; [eapply RF.reach_step; eauto|].
    split; [by apply rel_set|]. split; [exact Hw|].
    intros Hrv Hrf. destruct (Hd Hrv Hrf) as (Hp & Hth). split; [exact Hp|].
    intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|_]; [exact (Ht Hrv Hrf)|apply Hth].
  Qed.

  Lemma old_inv flush s o : sim_ok true flush s o → RF.inv k strict o.
  Proof. intros H. exact (RF.inv_reachable k Hk strict o (proj1 H)). Qed.

  Lemma old_pre o : RF.inv k strict o → RF.recovered o = false →
    RF.pre_inv k strict o ∧ RF.in_range k (snd (RF.d0 o)).
  Proof. intros (Hd & _ & _ & Hi) Hr. rewrite Hr in Hi. done. Qed.

  Lemma old_post o : RF.inv k strict o → RF.recovered o = true → RF.post_inv k strict o.
  Proof. intros (_ & _ & _ & Hi) Hr. rewrite Hr in Hi. done. Qed.

  Lemma pthread_ok_pm s s' o o' t r :
    nvmm s' = nvmm s → (∀ vd sd t0, dram_ok s o vd sd t0 → dram_ok s' o' vd sd t0) →
    pthread_ok s o t r → pthread_ok s' o' t r.
  Proof.
    intros Hpm Hd. apply pthread_ok_mono; [exact Hd| | | |];
      unfold nv_mods, version, pair_after, line_writes, line_mark; rewrite Hpm; [lia|done|lia|done].
  Qed.

  (** *** Line 3 *)

  Lemma pre_line3_mods0 o t vd sd vn sn t0 :
    RF.inv k strict o → RF.recovered o = false → RF.rs o t = RF.RV vd sd vn sn t0 →
    (vn, sn) = (vd, sd) → RF.mods o = 0.
  Proof.
    intros Hi Hr Ht E. destruct (old_pre o Hi Hr) as ((_ & Hnvs & Hok) & Hd0).
    specialize (Hok t). rewrite Ht in Hok. simpl in Hok. destruct Hok as (E1 & _ & Hread).
    assert (Hnd : RF.n0 o = RF.d0 o).
    { destruct Hread as [(E2 & _)|(E2 & _)]; [congruence|].
      exfalso. apply (RF.bumped_not_d0 k Hk o Hd0). congruence. }
    destruct Hnvs as [(_ & Hm)|(_ & Hw & _)]; [exact Hm|].
    rewrite Hnd in Hw. exfalso. exact (RF.no_window_same k Hk strict _ Hw).
  Qed.

  Lemma sim_line3 reread flush s o t vd sd vn sn t0 :
    sim_ok reread flush s o → rs s t = PV vd sd vn sn t0 → nv_mods s - t0 < half → (vn, sn) = (vd, sd) →
    ∃ o', sim_ok reread flush (PSt (nvmm s) (dram s) true (upd_rs (rs s) t PIdle)) o' ∧ RF.step k strict reread o o'.
  Proof.
    intros Hsim Ht Hg E. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    assert (Ht' : RF.rs o t = RF.RV vd sd vn sn t0) by (rewrite Hrs, Ht; reflexivity).
    assert (Hg' : RF.mods o - t0 < half) by (rewrite Hmods; exact Hg).
    destruct (RF.recovered o) eqn:Hr0; symmetry in Hrec.
    - exists (RF.set_rs o t (proj PIdle)).
      assert (Hret : RF.ret (RF.set_rs o t RF.RIdle) = RF.set_rs o t RF.RIdle).
      { unfold RF.ret. simpl. rewrite Hr0. reflexivity. }
      assert (Hstep : RF.step k strict reread o (RF.set_rs o t (proj PIdle))).
      { destruct (cell_dec (RF.dr o) (vd, sd)) as [Heq|Hne].
        - simpl. rewrite <- Hret. exact (RF.s_line3 k strict reread o t vd sd vn sn t0 Ht' Hg' (λ _, Heq) E).
        - destruct reread.
          + exact (RF.s_revalidate_fail k strict true o t vd sd vn sn t0 eq_refl Ht' Hg' Hne).
          + simpl. rewrite <- Hret.
            exact (RF.s_line3 k strict false o t vd sd vn sn t0 Ht' Hg' (λ H, ltac:(discriminate H)) E). }
      split; [|exact Hstep].
      replace (PSt (nvmm s) (dram s) true (upd_rs (rs s) t PIdle)) with (set_rs s t PIdle)
        by (unfold set_rs; rewrite Hrec; reflexivity).
      apply sim_set; [exact Hsim|exact Hstep|intros; exact I].
    - set (o' := RF.first_recovery (RF.set_rs o t RF.RIdle) (RF.dr o)).
      assert (Hret : RF.ret (RF.set_rs o t RF.RIdle) = o').
      { unfold RF.ret, o'. simpl. rewrite Hr0. reflexivity. }
      assert (Hstep : RF.step k strict reread o o').
      { rewrite <- Hret. refine (RF.s_line3 k strict reread o t vd sd vn sn t0 Ht' Hg' _ E).
        intros ->. destruct (old_pre o (old_inv flush s o Hsim) Hr0) as ((Hdr0 & _ & Hok) & _).
        specialize (Hok t). rewrite Ht' in Hok. destruct Hok as (E1 & _). rewrite Hdr0, <- E1. reflexivity. }
      exists o'. split; [|exact Hstep].
      split; [eapply RF.reach_step; eauto|].
      split.
      { split; [exact Hnv|]. split; [exact Hdr|]. split; [reflexivity|].
        split; [exact (rs_upd o s t PIdle Hrs)|exact Hmods]. }
      split; [exact Hw|].
      intros Hrv Hrf. subst reread flush.
      pose proof (old_inv true s o Hsim) as Hi.
      assert (Hm0 : RF.mods o = 0) by exact (pre_line3_mods0 o t vd sd vn sn t0 Hi Hr0 Ht' E).
      assert (Hpost : RF.post_inv k strict o').
      { apply (RF.reachable_post_inv k Hk); [eapply RF.reach_step; eauto|reflexivity]. }
      destruct Hpost as (Hnv' & _).
      destruct (Hd eq_refl eq_refl) as (_ & Hth).
      pose proof Hw as (_ & _ & Hmk & _).
      split.
      + intros _. change (RF.mrec o') with (RF.mods o). change (RF.dv o') with (RF.mods o).
        change (line_mark (PSt (nvmm s) (dram s) true (upd_rs (rs s) t PIdle))) with (line_mark s).
        change (nv_mods (PSt (nvmm s) (dram s) true (upd_rs (rs s) t PIdle))) with (nv_mods s).
        split; [lia|]. split; [|split; [lia|lia]].
        intros i Hi'.
        assert (i = nv_mods s) as -> by lia.
        change (version s (nv_mods s) = RF.rcell k o' (nv_mods s)).
        rewrite (version_top s o Hw), <- Hnv, <- Hmods. exact Hnv'.
      + intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne]; [exact I|].
        apply (pthread_ok_pm s _ o); [reflexivity| |apply Hth].
        intros ???. apply dram_ok_first; [exact Hrec|reflexivity|reflexivity].
  Qed.

  (** *** Line 5 *)

  Lemma sim_line5 reread flush s o t vd sd vn sn t0 :
    sim_ok reread flush s o → rs s t = PL5 vd sd vn sn t0 → nv_mods s - t0 < half → dram s = (vd, sd) →
    ∃ o', sim_ok reread flush (PSt (nvmm s) (vn, sn) true (upd_rs (rs s) t PIdle)) o' ∧ RF.step k strict reread o o'.
  Proof.
    intros Hsim Ht Hg Hdr'. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    assert (Ht' : RF.rs o t = RF.RL5 vd sd vn sn t0) by (rewrite Hrs, Ht; reflexivity).
    assert (Hg' : RF.mods o - t0 < half) by (rewrite Hmods; exact Hg).
    assert (Hdr'' : RF.dr o = (vd, sd)) by congruence.
    set (o' := RF.dram_write k (RF.set_rs o t RF.RIdle) (vn, sn)).
    assert (Hstep : RF.step k strict reread o o') by exact (RF.s_line5_ok k strict reread o t vd sd vn sn t0 Ht' Hg' Hdr'').
    assert (Hro : RF.reachable k strict reread o') by (eapply RF.reach_step; eauto).
    assert (Hf : RF.nv o' = RF.nv o ∧ RF.dr o' = (vn, sn) ∧ RF.recovered o' = true ∧
                 RF.rs o' = RF.upd (RF.rs o) t RF.RIdle ∧ RF.mods o' = RF.mods o ∧
                 RF.d0 o' = RF.d0 o ∧ RF.n0 o' = RF.n0 o).
    { unfold o', RF.dram_write. simpl. destruct (RF.recovered o); simpl; repeat split. }
    destruct Hf as (Hf1 & Hf2 & Hf3 & Hf4 & Hf5 & Hf6 & Hf7).
    set (s' := PSt (nvmm s) (vn, sn) true (upd_rs (rs s) t PIdle)).
    exists o'. split; [|exact Hstep]. split; [exact Hro|].
    split.
    { unfold rel. rewrite Hf1, Hf2, Hf3, Hf4, Hf5. split; [exact Hnv|]. split; [reflexivity|].
      split; [reflexivity|]. split; [exact (rs_upd o s t PIdle Hrs)|exact Hmods]. }
    split.
    { destruct Hw as (H1 & H2 & H3 & H4 & H5). split; [exact H1|]. split; [exact H2|].
      split; [exact H3|]. split; [exact H4|]. rewrite Hf7. exact H5. }
    intros Hrv Hrf. subst reread flush.
    pose proof (old_inv true s o Hsim) as Hi.
    pose proof (RF.reachable_post_inv k Hk strict o' Hro Hf3) as (Hnv' & Hdr2 & Hb1 & Hb2 & _).
    rewrite Hf2 in Hdr2. rewrite Hf5 in Hb1, Hb2.
    destruct (Hd eq_refl eq_refl) as (Hp & Hth).
    pose proof (Hth t) as Hu. rewrite Ht in Hu. destruct Hu as (HD & c & Hc & Hvc & Hmc).
    pose proof HD as (Ht0 & Hd0r).
    pose proof M_facts as (Hh & HM).
    assert (Hks : line_mark s' = line_mark s) by reflexivity.
    assert (Hms : nv_mods s' = nv_mods s) by reflexivity.
    assert (Hvs : ∀ c, version s' c = version s c) by reflexivity.
    destruct (RF.recovered o) eqn:Hr0; symmetry in Hrec.
    - (* recovered before: the ghost numbering stays *)
      assert (Hmr' : RF.mrec o' = RF.mrec o) by (unfold o', RF.dram_write; simpl; rewrite Hr0; reflexivity).
      assert (Hrc' : ∀ i, RF.rcell k o' i = RF.rcell k o i)
        by (intros i; unfold o', RF.dram_write; simpl; rewrite Hr0; reflexivity).
      destruct (Hp Hrec) as (Hmr & Hhist & Hdv & Hsafe0).
      pose proof (old_post o Hi Hr0) as Hpost.
      (* the version line 5 copies is the one the thread wrote back *)
      assert (Hc' : c = RF.dv o').
      { destruct (Z_lt_le_dec c (RF.mrec o)) as [Hlt|Hge].
        - exfalso. assert (E : (vd, sd) = RF.d0 o) by (apply Hd0r; right; lia).
          apply (RF.post_stale_dram_differs k strict o vd sd t0 Hpost); [|exact Hg'|exact Hdr''].
          split; [exact E|]. split; [apply Hsafe0; lia|lia].
        - assert (Hv : RF.rcell k o c = RF.rcell k o (RF.dv o')).
          { rewrite <- Hhist by lia. rewrite Hvc, <- Hrc'. exact Hdr2. }
          unfold RF.rcell in Hv. injection Hv as _ Hs.
          destruct (Z_le_gt_dec c (RF.dv o')).
          + apply (RF.mod_eq_close k Hk) in Hs; lia.
          + symmetry in Hs. apply (RF.mod_eq_close k Hk) in Hs; lia. }
      split.
      + intros _. rewrite Hmr', Hks, Hms. split; [exact Hmr|]. split.
        * intros i Hi'. rewrite Hvs, Hrc'. apply Hhist. exact Hi'.
        * split; [rewrite <- Hc'; lia|]. rewrite Hrc', Hf6. exact Hsafe0.
      + intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne]; [exact I|].
        apply (pthread_ok_pm s _ o); [reflexivity| |apply Hth].
        intros ???. apply dram_ok_same; [simpl; congruence|exact Hmr'|exact Hf6|apply Z.le_refl].
    - (* the first return *)
      assert (Hmr' : RF.mrec o' = RF.mods o) by (unfold o', RF.dram_write; simpl; rewrite Hr0; reflexivity).
      assert (Hdv' : RF.dv o' = RF.mods o) by (unfold o', RF.dram_write; simpl; rewrite Hr0; reflexivity).
      destruct (old_pre o Hi Hr0) as ((_ & Hnvs & Hok) & _).
      pose proof (Hok t) as Hu. rewrite Ht' in Hu. simpl in Hu. destruct Hu as (E1 & E2 & Hne & _ & _).
      assert (Hmods1 : RF.mods o + 1 <= Z.of_nat (line_mark s)).
      { destruct Hnvs as [(Hn & Hm0)|(Hn & Hwin & Hm1)]; [rewrite Hm0; lia|].
        rewrite Hm1 in *. destruct (Z.eq_dec c 1) as [->|Hc1]; [lia|].
        assert (c = 0) as -> by lia. exfalso.
        pose proof Hw as (_ & _ & _ & _ & Hn0).
        assert (E : RF.n0 o = RF.bumped k o).
        { rewrite <- Hn0, <- Hn, <- E2. exact Hvc. }
        apply (f_equal snd) in E. unfold RF.bumped in E. simpl in E. rewrite E in Hwin.
        exact (RF.no_window_succ k Hk strict _ Hwin). }
      split.
      + intros _. rewrite Hmr', Hks, Hms. split; [lia|]. split.
        * intros i Hi'. assert (i = nv_mods s) as -> by lia.
          rewrite Hvs, (version_top s o Hw), <- Hnv, <- Hf1, <- Hmods, <- Hf5. exact Hnv'.
        * split; [rewrite Hdv'; exact Hmods1|]. intros _. rewrite Hf6. intros E.
          apply Hne. rewrite E, <- Hdv'. exact Hdr2.
      + intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne']; [exact I|].
        apply (pthread_ok_pm s _ o); [reflexivity| |apply Hth].
        intros ???. apply dram_ok_first; [exact Hrec|exact Hf6|reflexivity].
  Qed.

  (** *** Writes to the NVMM line: line 4.1 and Mirror's DWCAS *)

  Lemma write_facts s s' o o' x w :
    pwell s o → nvmm s' = p_write (nvmm s) (fline x) w → RF.n0 o' = RF.n0 o →
    snd (pair_of (line_writes s ++ [w])) < M →
    pwell s' o' ∧ line_writes s' = line_writes s ++ [w] ∧ line_mark s' = line_mark s ∧
    p_pwbs (nvmm s') = p_pwbs (nvmm s) ∧ nv_mods s' = nv_mods s + 1 ∧ nv_pair s' = pair_of (line_writes s ++ [w]).
  Proof.
    intros Hw Hpm Hn0 Hq. pose proof (pwell_len s o Hw) as [Hl _].
    destruct Hw as (Hwf & Hlines & Hmk & Hseq & Hv1).
    assert (Hh : line_writes s' = line_writes s ++ [w]) by (unfold line_writes; rewrite Hpm; apply hist_p_write, Hlines).
    assert (Hmk' : line_mark s' = line_mark s) by (unfold line_mark; rewrite Hpm; apply p_write_mark).
    split; [|split; [exact Hh|split; [exact Hmk'|split; [rewrite Hpm; reflexivity|split]]]].
    - split; [rewrite Hpm; apply p_write_wf, Hwf|].
      split; [rewrite Hpm; exact (eq_trans (mem_write_lines (p_mem (nvmm s)) (fline x) w) Hlines)|].
      split; [rewrite Hmk'; exact Hmk|]. split.
      + intros n. destruct (decide (n <= length (line_writes s))%nat).
        * unfold pair_after. rewrite Hh, take_app_le by done. apply Hseq.
        * unfold pair_after. rewrite Hh, take_ge by (rewrite app_length; simpl; lia). exact Hq.
      + unfold pair_after. rewrite Hh, take_app_le by lia. rewrite Hn0. exact Hv1.
    - unfold nv_mods. rewrite Hh, app_length. simpl. lia.
    - rewrite nv_pair_writes, Hh. reflexivity.
  Qed.

  Lemma sim_line41 reread flush s o t vd sd vn sn t0 q :
    sim_ok reread flush s o → rs s t = PL41 vd sd vn sn t0 → nv_mods s - t0 < half → snd (nv_pair s) = sn →
    Z.of_nat q = (sd + 1) mod M →
    ∃ o', sim_ok reread flush (PSt (p_write (nvmm s) (fline SEQ) [(SEQ, q)]) (dram s) (recovered s)
                       (upd_rs (rs s) t (after4 flush vd sd vn (Z.of_nat q) t0))) o' ∧
          RF.step k strict reread o o'.
  Proof.
    intros Hsim Ht Hg Hsn Hq. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    set (s' := PSt (p_write (nvmm s) (fline SEQ) [(SEQ, q)]) (dram s) (recovered s)
                   (upd_rs (rs s) t (after4 flush vd sd vn (Z.of_nat q) t0))).
    assert (Ht' : RF.rs o t = RF.RL41 vd sd vn sn t0) by (rewrite Hrs, Ht; reflexivity).
    assert (Hg' : RF.mods o - t0 < half) by (rewrite Hmods; exact Hg).
    set (o' := RF.nvmm_seq_write (RF.set_rs o t (RF.RL5 vd sd vn ((sd + 1) mod M) t0)) ((sd + 1) mod M)).
    assert (Hstep : RF.step k strict reread o o').
    { exact (RF.s_line41_ok k strict reread o t vd sd vn sn t0 Ht' Hg' ltac:(rewrite Hnv; exact Hsn)). }
    pose proof M_facts as (Hh & HM).
    destruct (write_facts s s' o o' SEQ [(SEQ, q)] Hw eq_refl eq_refl) as (Hw' & Hh' & Hmk' & Hpw' & Hm' & Hnv').
    { rewrite pair_of_seqw. simpl. rewrite Hq. apply Z.mod_pos_bound. lia. }
    rewrite pair_of_seqw, <- nv_pair_writes in Hnv'.
    exists o'. split; [|exact Hstep]. split; [eapply RF.reach_step; eauto|].
    split.
    { split; [simpl; rewrite Hnv', Hnv, Hq; reflexivity|]. split; [exact Hdr|].
      split; [exact Hrec|]. split; [|simpl; lia].
      intros t'. simpl. unfold RF.upd, upd_rs. destruct (Nat.eqb t' t); [|apply Hrs].
      destruct flush; simpl; rewrite Hq; reflexivity. }
    split; [exact Hw'|].
    intros Hrv Hrf. subst reread flush.
    destruct (Hd eq_refl eq_refl) as (Hp & Hth).
    destruct (recovered s) eqn:Hps.
    { exfalso. apply (RF.claim2_line41_fails_after_recovery k Hk strict o t vd sd vn sn t0 Ho);
        [congruence|exact Ht'|exact Hg'|congruence]. }
    pose proof (old_inv true s o Hsim) as Hi.
    destruct (old_pre o Hi ltac:(congruence)) as ((_ & Hnvs & Hok) & _).
    pose proof (Hok t) as Hu. rewrite Ht' in Hu. simpl in Hu. destruct Hu as (E1 & E2 & _ & _).
    assert (Hvn : fst (nv_pair s) = vn).
    { rewrite <- Hnv. assert (E : fst (RF.nv o) = fst (RF.n0 o))
        by (destruct Hnvs as [(-> & _)|(-> & _)]; reflexivity).
      rewrite E, <- E2. reflexivity. }
    split; [intros H; simpl in H; congruence|].
    intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne].
    - pose proof (Hth t) as Hu. rewrite Ht in Hu. destruct Hu as (HD & _). simpl.
      split; [apply (dram_ok_same s s' o o'); [simpl; congruence|reflexivity|reflexivity|lia|exact HD]|].
      exists (nv_mods s'). split; [destruct HD; lia|].
      rewrite (version_top s' o' Hw'), Hnv', Hvn. reflexivity.
    - eapply pthread_ok_mono; [| | | | |apply Hth].
      + intros ???. apply dram_ok_same; [simpl; congruence|reflexivity|reflexivity|lia].
      + lia.
      + intros c Hc. exact (version_app s s' _ c Hh' Hc).
      + lia.
      + intros n. rewrite Hpw', Hmk'. auto.
  Qed.

  Lemma sim_write reread flush s o v q :
    sim_ok reread flush s o → recovered s = true → snd (nv_pair s) = snd (dram s) →
    Z.of_nat q = (snd (nv_pair s) + 1) mod M →
    ∃ o', sim_ok reread flush (PSt (p_write (nvmm s) (fline VAL) [(VAL, v); (SEQ, q)]) (dram s) true (rs s)) o' ∧
          RF.step k strict reread o o'.
  Proof.
    intros Hsim Hr Hs Hq. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    set (s' := PSt (p_write (nvmm s) (fline VAL) [(VAL, v); (SEQ, q)]) (dram s) true (rs s)).
    set (o' := RF.St (Z.of_nat v, (snd (RF.nv o) + 1) mod M) (RF.dr o) true (RF.rs o)
                     (RF.mods o + 1) (RF.d0 o) (RF.n0 o) (RF.mrec o) (RF.base o) (RF.dv o)
                     (RF.hist_upd (RF.hist o) (RF.mods o + 1) (Z.of_nat v))).
    assert (Hstep : RF.step k strict reread o o').
    { exact (RF.s_write k strict reread o (Z.of_nat v) ltac:(congruence) ltac:(congruence)). }
    pose proof M_facts as (Hh & HM).
    destruct (write_facts s s' o o' VAL [(VAL, v); (SEQ, q)] Hw eq_refl eq_refl)
      as (Hw' & Hh' & Hmk' & Hpw' & Hm' & Hnv').
    { rewrite pair_of_dwcas. simpl. rewrite Hq. apply Z.mod_pos_bound. lia. }
    rewrite pair_of_dwcas in Hnv'.
    exists o'. split; [|exact Hstep]. split; [eapply RF.reach_step; eauto|].
    split.
    { split; [simpl; rewrite Hnv', Hq, Hnv; reflexivity|]. split; [exact Hdr|].
      split; [reflexivity|]. split; [exact Hrs|]. simpl. lia. }
    split; [exact Hw'|].
    intros Hrv Hrf. subst reread flush.
    destruct (Hd eq_refl eq_refl) as (Hp & Hth). destruct (Hp Hr) as (Hmr & Hhist & Hdv & Hsafe).
    pose proof (old_post o (old_inv true s o Hsim) ltac:(congruence)) as (Hpn & _ & Hb1 & Hb2 & _).
    assert (Hrc : ∀ i, i <= RF.mods o → RF.rcell k o' i = RF.rcell k o i).
    { intros i Hi. unfold RF.rcell. simpl. unfold RF.hist_upd.
      destruct (Z.eq_dec i (RF.mods o + 1)); [lia|reflexivity]. }
    split.
    - intros _. split; [exact Hmr|]. split.
      + intros i Hi. change (RF.mrec o') with (RF.mrec o) in Hi.
        destruct (Z.eq_dec i (nv_mods s')) as [->|Hne].
        * rewrite (version_top s' o' Hw'), Hnv'. unfold RF.rcell. simpl. unfold RF.hist_upd.
          rewrite Hm', <- Hmods. destruct (Z.eq_dec (RF.mods o + 1) (RF.mods o + 1)) as [_|]; [|congruence].
          f_equal. rewrite Hq, <- Hnv, Hpn. unfold RF.rcell. simpl. rewrite Zplus_mod_idemp_l. f_equal. lia.
        * rewrite (version_app s s' _ i Hh') by lia. rewrite Hrc by lia. apply Hhist. lia.
      + rewrite Hmk'. split; [exact Hdv|]. change (RF.mrec o') with (RF.mrec o). rewrite Hrc by lia. exact Hsafe.
    - intros t'. eapply pthread_ok_mono; [| | | | |apply Hth].
      + intros ???. apply dram_ok_same; [simpl; congruence|reflexivity|reflexivity|lia].
      + lia.
      + intros c Hc. exact (version_app s s' _ c Hh' Hc).
      + lia.
      + intros n. rewrite Hpw', Hmk'. auto.
  Qed.

  (** *** Write-backs and fences *)

  Lemma sim_help reread flush s o w :
    sim_ok reread flush s o → recovered s = true → snd (nv_pair s) = (snd (dram s) + 1) mod M →
    ∃ o', sim_ok reread flush (PSt (p_fence (p_pwb fline (nvmm s) w VAL) w) (nv_pair s) true (rs s)) o' ∧
          RF.step k strict reread o o'.
  Proof.
    intros Hsim Hr Hs. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    set (s' := PSt (p_fence (p_pwb fline (nvmm s) w VAL) w) (nv_pair s) true (rs s)).
    set (o' := RF.St (RF.nv o) (RF.nv o) true (RF.rs o) (RF.mods o) (RF.d0 o) (RF.n0 o)
                     (RF.mrec o) (RF.base o) (RF.mods o) (RF.hist o)).
    assert (Hstep : RF.step k strict reread o o').
    { exact (RF.s_help k strict reread o ltac:(congruence) ltac:(congruence)). }
    pose proof (pwell_len s o Hw) as [Hl Hml].
    pose proof Hw as (Hwf & Hlines & Hmk & Hseq & Hv1).
    assert (Hh' : line_writes s' = line_writes s) by exact (p_fence_hist (p_pwb fline (nvmm s) w VAL) w 0).
    assert (Hpwf : p_wf (p_pwb fline (nvmm s) w VAL)) by (apply p_pwb_wf, Hwf).
    assert (Hmk' : (length (line_writes s) <= line_mark s')%nat).
    { exact (p_pwb_fence_covers fline (nvmm s) w VAL Hwf ltac:(unfold fline; lia)). }
    assert (Hvs : ∀ n, pair_after s' n = pair_after s n) by (intros n; unfold pair_after; rewrite Hh'; reflexivity).
    assert (Hms : nv_mods s' = nv_mods s) by (unfold nv_mods; rewrite Hh'; reflexivity).
    assert (Hnvs : nv_pair s' = nv_pair s) by (rewrite !nv_pair_writes, Hh'; reflexivity).
    exists o'. split; [|exact Hstep]. split; [eapply RF.reach_step; eauto|].
    split.
    { split; [simpl; rewrite Hnvs; exact Hnv|]. split; [exact Hnv|]. split; [reflexivity|].
      split; [exact Hrs|]. simpl. rewrite Hms. exact Hmods. }
    split.
    { split; [apply p_fence_wf, Hpwf|]. split; [exact (eq_trans (fence_lines (p_pwb fline (nvmm s) w VAL) w) Hlines)|].
      split; [lia|]. split; [intros n; rewrite Hvs; apply Hseq|]. rewrite Hvs. exact Hv1. }
    intros Hrv Hrf. subst reread flush.
    destruct (Hd eq_refl eq_refl) as (Hp & Hth). destruct (Hp Hr) as (Hmr & Hhist & Hdv & Hsafe).
    split.
    - intros _. split; [exact Hmr|]. split.
      + intros i Hi. unfold version. rewrite Hvs. apply Hhist. rewrite <- Hms. exact Hi.
      + split; [simpl; rewrite Hmods; unfold nv_mods; lia|exact Hsafe].
    - intros t'. eapply pthread_ok_mono; [| | | | |apply Hth].
      + intros ???. apply dram_ok_same; [simpl; congruence|reflexivity|reflexivity|lia].
      + lia.
      + intros c _. unfold version. apply Hvs.
      + lia.
      + intros n Hn.
        assert (Hn0 : (t', 0%nat, n) ∈ p_pwbs (p_pwb fline (nvmm s) w VAL) ∨
                      (n <= mark (p_mem (p_pwb fline (nvmm s) w VAL)) 0)%nat).
        { destruct Hn as [Hin|Hn]; [left; apply elem_of_cons; right; exact Hin|right; exact Hn]. }
        destruct (fence_pending (p_pwb fline (nvmm s) w VAL) w t' n Hpwf Hlines Hn0)
          as [(_ & Hin)|Hn']; [left; exact Hin|right; exact Hn'].
  Qed.

  Lemma sim_pwb reread flush s o t vd sd vn sn t0 :
    sim_ok reread flush s o → rs s t = PPwb vd sd vn sn t0 →
    sim_ok reread flush (PSt (p_pwb fline (nvmm s) t VAL) (dram s) (recovered s)
                      (upd_rs (rs s) t (PFence vd sd vn sn t0))) o.
  Proof.
    intros Hsim Ht. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    split; [exact Ho|]. split.
    { split; [exact Hnv|]. split; [exact Hdr|]. split; [exact Hrec|]. split; [|exact Hmods].
      intros t'. rewrite Hrs. cbn [rs]. unfold upd_rs.
      destruct (Nat.eqb_spec t' t) as [->|_]; [rewrite Ht|]; reflexivity. }
    split.
    { destruct Hw as (H1 & H2 & H3 & H4 & H5). split; [apply p_pwb_wf, H1|]. auto. }
    intros Hrv Hrf. destruct (Hd Hrv Hrf) as (Hp & Hth). split; [exact Hp|].
    intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne].
    - pose proof (Hth t) as Hu. rewrite Ht in Hu. destruct Hu as (HD & c & Hc & Hvc).
      split; [exact HD|]. exists c, (length (line_writes s)). split; [exact Hc|]. split; [exact Hvc|].
      split; [unfold nv_mods in Hc; destruct HD; lia|]. left. apply elem_of_cons. left. reflexivity.
    - eapply pthread_ok_mono; [| | | | |apply Hth].
      + intros ???. exact id.
      + apply Z.le_refl.
      + reflexivity.
      + apply Nat.le_refl.
      + intros n [Hin|Hn]; [left; apply elem_of_cons; right; exact Hin|right; exact Hn].
  Qed.

  Lemma sim_fence reread flush s o t vd sd vn sn t0 :
    sim_ok reread flush s o → rs s t = PFence vd sd vn sn t0 →
    sim_ok reread flush (PSt (p_fence (nvmm s) t) (dram s) (recovered s)
                      (upd_rs (rs s) t (PL5 vd sd vn sn t0))) o.
  Proof.
    intros Hsim Ht. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    set (s' := PSt (p_fence (nvmm s) t) (dram s) (recovered s) (upd_rs (rs s) t (PL5 vd sd vn sn t0))).
    pose proof Hw as (Hwf & Hlines & Hmk & Hseq & Hv1).
    assert (Hh' : line_writes s' = line_writes s) by exact (p_fence_hist (nvmm s) t 0).
    assert (Hmk' : (line_mark s <= line_mark s')%nat) by apply p_fence_mark_mono.
    assert (Hvs : ∀ n, pair_after s' n = pair_after s n) by (intros n; unfold pair_after; rewrite Hh'; reflexivity).
    assert (Hms : nv_mods s' = nv_mods s) by (unfold nv_mods; rewrite Hh'; reflexivity).
    assert (Hnvs : nv_pair s' = nv_pair s) by (rewrite !nv_pair_writes, Hh'; reflexivity).
    split; [exact Ho|]. split.
    { split; [rewrite Hnvs; exact Hnv|]. split; [exact Hdr|]. split; [exact Hrec|].
      split; [|rewrite Hms; exact Hmods].
      intros t'. rewrite Hrs. unfold s'. cbn [rs]. unfold upd_rs.
      destruct (Nat.eqb_spec t' t) as [->|_]; [rewrite Ht|]; reflexivity. }
    split.
    { split; [apply p_fence_wf, Hwf|]. split; [exact (eq_trans (fence_lines (nvmm s) t) Hlines)|].
      split; [lia|]. split; [intros n; rewrite Hvs; apply Hseq|]. rewrite Hvs. exact Hv1. }
    intros Hrv Hrf. destruct (Hd Hrv Hrf) as (Hp & Hth). split.
    { intros Hr. destruct (Hp Hr) as (Hmr & Hhist & Hdv & Hsafe). split; [exact Hmr|]. split.
      - intros i Hi. unfold version. rewrite Hvs. apply Hhist. rewrite <- Hms. exact Hi.
      - split; [lia|exact Hsafe]. }
    intros t'. simpl. unfold upd_rs. destruct (Nat.eqb_spec t' t) as [->|Hne].
    - pose proof (Hth t) as Hu. rewrite Ht in Hu. destruct Hu as (HD & c & n & Hc & Hvc & Hcn & Hpn).
      split; [apply (dram_ok_same s s' o o); [reflexivity|reflexivity|reflexivity|lia|exact HD]|].
      exists c. rewrite Hms. split; [exact Hc|]. split; [unfold version; rewrite Hvs; exact Hvc|].
      destruct (fence_pending (nvmm s) t t n Hwf Hlines Hpn) as [(? & _)|Hn]; [congruence|].
      change (line_mark s') with (mark (p_mem (p_fence (nvmm s) t)) 0). lia.
    - eapply pthread_ok_mono; [| | | | |apply Hth].
      + intros ???. apply dram_ok_same; [reflexivity|reflexivity|reflexivity|lia].
      + lia.
      + intros c _. unfold version. apply Hvs.
      + exact Hmk'.
      + intros n Hn. destruct (fence_pending (nvmm s) t t' n Hwf Hlines Hn)
          as [(_ & Hin)|Hn']; [left; exact Hin|right; exact Hn'].
  Qed.

  (** *** A crash *)

  (** The immediate-persistence model's state right after a crash with
      NVMM [n] and DRAM [d]. *)
  Definition fresh_old (n d : RF.cell) : RF.state :=
    RF.St n d false (λ _, RF.RIdle) 0 d n 0 0 0 (λ _, 0).

  Lemma crash_pmem_wf v q : p_wf (crash_pmem v q).
  Proof.
    split; [reflexivity|]. split; [|constructor].
    intros [|[|L]]; unfold mark, line_hist; simpl; lia.
  Qed.

  Lemma sim_fresh reread flush s v q :
    nvmm s = crash_pmem v q → Z.of_nat q < M → recovered s = false → (∀ t, rs s t = PIdle) →
    RF.in_range k (snd (dram s)) →
    sim_ok reread flush s (fresh_old (Z.of_nat v, Z.of_nat q) (dram s)).
  Proof.
    intros Hpm Hq Hr Hidle Hd.
    assert (Hh : line_writes s = [[(VAL, v); (SEQ, q)]]) by (unfold line_writes; rewrite Hpm; reflexivity).
    assert (Hnv : nv_pair s = (Z.of_nat v, Z.of_nat q)) by (rewrite nv_pair_writes, Hh; exact (pair_of_dwcas [] v q)).
    split.
    { apply RF.reach_init. unfold RF.init, RF.in_range in *. simpl. repeat split; auto; lia. }
    split.
    { split; [symmetry; exact Hnv|]. split; [reflexivity|]. split; [simpl; congruence|].
      split; [intros t; rewrite Hidle; reflexivity|]. unfold nv_mods. rewrite Hh. reflexivity. }
    split.
    { split; [rewrite Hpm; apply crash_pmem_wf|]. split; [rewrite Hpm; reflexivity|].
      split; [unfold line_mark; rewrite Hpm; change (1 <= 1)%nat; lia|]. split.
      - pose proof M_facts. intros n. unfold pair_after. rewrite Hh. destruct n as [|n].
        + change (Z.of_nat 0 < M). lia.
        + rewrite take_ge by (simpl; lia).
          change [[(VAL, v); (SEQ, q)]] with ([] ++ [[(VAL, v); (SEQ, q)]]). rewrite pair_of_dwcas. simpl. lia.
      - unfold pair_after. rewrite Hh. exact (pair_of_dwcas [] v q). }
    intros _ _. split; [intros H; congruence|]. intros t. rewrite Hidle. exact I.
  Qed.

  Lemma sim_crash reread flush s o keep d :
    sim_ok reread flush s o → RF.in_range k (snd d) →
    sim_ok reread flush (PSt (crash_pmem (p_image fline (nvmm s) keep VAL) (p_image fline (nvmm s) keep SEQ))
                      d false (λ _, PIdle))
      (fresh_old (crash_image s keep) d).
  Proof.
    intros (_ & _ & (_ & _ & _ & Hseq & _) & _) Hd.
    apply sim_fresh; [reflexivity| |reflexivity|reflexivity|exact Hd]. exact (Hseq (keep 0%nat)).
  Qed.

  (** *** Every step *)

  Lemma sim_set' reread flush s o t r :
    sim_ok reread flush s o → RF.step k strict reread o (RF.set_rs o t (proj r)) →
    (reread = true → flush = true → pthread_ok s o t r) →
    ∃ o', sim_ok reread flush (set_rs s t r) o' ∧
          (RF.step k strict reread o o' ∨ o' = o ∨ recovered (set_rs s t r) = false).
  Proof. intros H1 H2 H3. eexists. split; [exact (sim_set reread flush s o t r H1 H2 H3)|left; exact H2]. Qed.

  Lemma sim_step reread flush s s' o :
    sim_ok reread flush s o → pstep reread flush s s' →
    ∃ o', sim_ok reread flush s' o' ∧ (RF.step k strict reread o o' ∨ o' = o ∨ recovered s' = false).
  Proof.
    intros Hsim Hstep. pose proof Hsim as (Ho & (Hnv & Hdr & Hrec & Hrs & Hmods) & Hw & Hd).
    destruct Hstep as [s t Ht|s t vd sd t0 Ht Hg|s t vd sd vn sn t0 Ht Hg E
      |s t vd sd vn sn t0 Hrv Ht Hg Hne Hdne|s t vd sd vn sn t0 Ht Hg Hval Hne Hwin
      |s t vd sd vn sn t0 Ht Hg Hval Hne Hwin|s t vd sd vn sn t0 q Ht Hg Hsn Hq
      |s t vd sd vn sn t0 Ht Hg Hsn|s t vd sd vn sn t0 Ht|s t vd sd vn sn t0 Ht
      |s t vd sd vn sn t0 Ht Hg Hdr'|s t vd sd vn sn t0 Ht Hg Hdr'|s v q Hr Hs Hq|s w Hr Hs
      |s keep d Hok Hd'].
    - (* line 1 *)
      apply sim_set'; [exact Hsim| |].
      + cbn [proj]. rewrite <- Hdr, <- Hmods. apply RF.s_line1. rewrite Hrs, Ht. reflexivity.
      + intros -> _. pose proof (nv_mods_nonneg s o Hw) as Hm0. split; [lia|]. rewrite pair_eta_Z.
        pose proof (old_inv _ s o Hsim) as Hi. destruct (RF.recovered o) eqn:Hr0.
        * pose proof (old_post o Hi Hr0) as (_ & _ & Hb & _). intros [Hf|Hf]; [congruence|lia].
        * destruct (old_pre o Hi Hr0) as ((Hdr0 & _) & _). intros _. congruence.
    - (* line 2 *)
      apply sim_set'; [exact Hsim| |].
      + cbn [proj]. rewrite <- Hnv. apply RF.s_line2; [rewrite Hrs, Ht; reflexivity|lia].
      + intros -> ->. destruct (Hd eq_refl eq_refl) as (_ & Hth). pose proof (Hth t) as Hu.
        rewrite Ht in Hu. split; [exact Hu|]. exists (nv_mods s). split; [destruct Hu; lia|].
        rewrite (version_top s o Hw). symmetry. apply pair_eta_Z.
    - (* line 3 *)
      destruct (sim_line3 reread flush s o t vd sd vn sn t0 Hsim Ht Hg E) as (o' & ? & ?). eauto.
    - (* the fix of R2: DRAM changed since line 1, goto 1 *)
      apply sim_set'; [exact Hsim| |intros; exact I].
      apply RF.s_revalidate_fail with vd sd vn sn t0; [exact Hrv|rewrite Hrs, Ht; reflexivity|lia|congruence].
    - (* line 4: to line 4.1 *)
      apply sim_set'; [exact Hsim| |].
      + apply RF.s_line4; [rewrite Hrs, Ht; reflexivity|lia|intros H; rewrite Hdr; exact (Hval H)|exact Hne|exact Hwin].
      + intros -> ->. destruct (Hd eq_refl eq_refl) as (_ & Hth). pose proof (Hth t) as Hu.
        rewrite Ht in Hu. exact Hu.
    - (* line 4: to line 5 (with the fix of R1, its write-back first) *)
      apply sim_set'; [exact Hsim| |].
      + replace (proj (after4 flush vd sd vn sn t0)) with (RF.RL5 vd sd vn sn t0) by (destruct flush; reflexivity).
        apply RF.s_line4_skip; [rewrite Hrs, Ht; reflexivity|lia|intros H; rewrite Hdr; exact (Hval H)|exact Hne|exact Hwin].
      + intros -> ->. destruct (Hd eq_refl eq_refl) as (_ & Hth). pose proof (Hth t) as Hu.
        rewrite Ht in Hu. exact Hu.
    - (* line 4.1 succeeds *)
      destruct (sim_line41 reread flush s o t vd sd vn sn t0 q Hsim Ht Hg Hsn Hq) as (o' & ? & ?). eauto.
    - (* line 4.1 fails: goto 1 *)
      apply sim_set'; [exact Hsim| |intros; exact I].
      apply RF.s_line41_fail with vd sd vn sn t0; [rewrite Hrs, Ht; reflexivity|lia|congruence].
    - (* the fix of R1: write-back *)
      exists o. split; [exact (sim_pwb reread flush s o t vd sd vn sn t0 Hsim Ht)|auto].
    - (* the fix of R1: fence *)
      exists o. split; [exact (sim_fence reread flush s o t vd sd vn sn t0 Hsim Ht)|auto].
    - (* line 5 succeeds *)
      destruct (sim_line5 reread flush s o t vd sd vn sn t0 Hsim Ht Hg Hdr') as (o' & ? & ?). eauto.
    - (* line 5 fails: goto 1 *)
      apply sim_set'; [exact Hsim| |intros; exact I].
      apply RF.s_line5_fail with vd sd vn sn t0; [rewrite Hrs, Ht; reflexivity|lia|congruence].
    - (* a Mirror write *)
      destruct (sim_write reread flush s o v q Hsim Hr Hs Hq) as (o' & ? & ?). eauto.
    - (* a Mirror copy to DRAM *)
      destruct (sim_help reread flush s o w Hsim Hr Hs) as (o' & ? & ?). eauto.
    - (* a crash *)
      eexists. split; [exact (sim_crash reread flush s o keep d Hsim Hd')|auto].
  Qed.

  Lemma sim_reachable reread flush s : preachable reread flush s → ∃ o, sim_ok reread flush s o.
  Proof.
    induction 1 as [s (Hex & Hr & Hidle & Hd)|s s' _ (o & Ho) Hstep].
    - destruct Hex as (v & q & Hpm & Hq). eexists. exact (sim_fresh reread flush s v q Hpm Hq Hr Hidle Hd).
    - destruct (sim_step reread flush s s' o Ho Hstep) as (o' & Ho' & _). eauto.
  Qed.

  (** ** The fixed protocol: Claim 2 and durability *)

  (** Mirror's first invariant and equal-seqs-equal-values, on the visible
      NVMM pair and the DRAM pair. *)
  Definition px_mirror_inv (s : pstate) : Prop :=
    (snd (nv_pair s) = snd (dram s) ∨ snd (nv_pair s) = (snd (dram s) + 1) mod M) ∧
    (snd (nv_pair s) = snd (dram s) → fst (nv_pair s) = fst (dram s)).

  Theorem px_claim2_mirror_invariants flush s :
    preachable true flush s → recovered s = true → px_mirror_inv s.
  Proof.
    intros Hs Hr. destruct (sim_reachable true flush s Hs) as (o & Ho & (Hnv & Hdr & Hrec & _) & _).
    pose proof (RF.claim2_mirror_invariants k Hk strict o Ho ltac:(congruence)) as Hm.
    unfold RF.mirror_inv in Hm. unfold px_mirror_inv. rewrite <- Hnv, <- Hdr. exact Hm.
  Qed.

  Theorem px_claim2_nvmm_changes_only_when_seqs_equal flush s s' :
    preachable true flush s → recovered s = true → pstep true flush s s' → recovered s' = true →
    nv_pair s' ≠ nv_pair s → snd (nv_pair s) = snd (dram s).
  Proof.
    intros Hs Hr Hstep Hr' Hne. destruct (sim_reachable true flush s Hs) as (o & Ho).
    destruct (sim_step true flush s s' o Ho Hstep) as (o' & Ho' & [Hst|[->|Hf]]).
    - destruct Ho as (Hro & (Hnv & Hdr & Hrec & _) & _). destruct Ho' as (_ & (Hnv' & _) & _).
      rewrite <- Hnv, <- Hdr.
      apply (RF.claim2_nvmm_changes_only_when_seqs_equal k Hk strict o o' Hro); [congruence|exact Hst|].
      rewrite Hnv', Hnv. exact Hne.
    - exfalso. apply Hne. destruct Ho as (_ & (Hnv & _) & _), Ho' as (_ & (Hnv' & _) & _). congruence.
    - congruence.
  Qed.

  (** The pair DRAM shows is persisted for sure: it is what NVMM held after
      a prefix of its line that every crash keeps. *)
  Theorem px_dram_persisted s :
    preachable true true s → recovered s = true → ∃ n, (n <= line_mark s)%nat ∧ pair_after s n = dram s.
  Proof.
    intros Hs Hr. destruct (sim_reachable true true s Hs) as (o & Ho).
    pose proof Ho as (Hro & (Hnv & Hdr & Hrec & _ & Hmods) & Hw & Hd).
    destruct (Hd eq_refl eq_refl) as (Hp & _). destruct (Hp Hr) as (Hmr & Hhist & Hdv & _).
    pose proof (RF.reachable_post_inv k Hk strict o Hro ltac:(congruence)) as (_ & Hdr0 & Hb1 & Hb2 & _).
    exists (S (Z.to_nat (RF.dv o))). split; [lia|].
    change (version s (RF.dv o) = dram s). rewrite Hhist by lia. rewrite <- Hdr0. exact Hdr.
  Qed.

  (** Every crash crash_image keeps the pair readers see in DRAM, or the NVMM
      pair of the update in flight (which then takes effect at the crash):
      no reader has seen a value a crash can lose. *)
  Theorem px_crash_keeps_dram_or_nvmm s keep :
    preachable true true s → recovered s = true → p_crash_ok (nvmm s) keep →
    crash_image s keep = dram s ∨ crash_image s keep = nv_pair s.
  Proof.
    intros Hs Hr Hok. destruct (sim_reachable true true s Hs) as (o & Ho).
    pose proof Ho as (Hro & (Hnv & Hdr & Hrec & _ & Hmods) & Hw & Hd).
    destruct (Hd eq_refl eq_refl) as (Hp & _). destruct (Hp Hr) as (Hmr & Hhist & Hdv & _).
    pose proof (RF.reachable_post_inv k Hk strict o Hro ltac:(congruence)) as (_ & Hdr0 & Hb1 & Hb2 & _).
    pose proof Hw as (_ & Hlines & _). specialize (Hok 0%nat ltac:(lia)).
    rewrite crash_image_after. pose proof (pwell_len s o Hw) as [Hl _].
    destruct (decide (keep 0%nat = length (line_writes s))) as [E|Hne].
    - right. rewrite E, <- nv_pair_after. reflexivity.
    - left. assert (E : keep 0%nat = S (Z.to_nat (RF.dv o))) by (unfold nv_mods, line_mark, line_writes in *; lia).
      rewrite E. change (version s (RF.dv o) = dram s). rewrite Hhist by lia. rewrite <- Hdr0. exact Hdr.
  Qed.

  (** ** Finding R1: without the write-back and fence, durability fails *)

  Lemma not_window_0_1 : ¬ RF.window k strict 0 1.
  Proof.
    unfold RF.window. change (0 - 1) with (-1). rewrite (RF.mod_minus_one k Hk).
    pose proof (RF.wtop_bounds k strict). pose proof M_facts. lia.
  Qed.

  (** After a crash NVMM and DRAM hold (0, 0); t0 returns at line 3; t1
      reads DRAM (0, 0) at line 1; a Mirror CAS writes (1, 1) to NVMM and
      has not flushed it yet; t1 reads (1, 1) at line 2, finds (0 − 1) mod
      2^k outside the window and copies (1, 1) to DRAM at line 5: a load
      now returns 1.  A crash may keep NVMM's line up to its mark, (0, 0):
      the value a load returned is lost. *)
  Theorem px_r1_as_written_loses_dram reread :
    ∃ s keep s', preachable reread false s ∧ recovered s = true ∧ dram s = (1, 1) ∧ nv_pair s = (1, 1) ∧
      p_crash_ok (nvmm s) keep ∧ crash_image s keep = (0, 0) ∧
      ¬ (∃ n, (n <= line_mark s)%nat ∧ pair_after s n = dram s) ∧
      pstep reread false s s' ∧ nv_pair s' = (0, 0).
  Proof.
    pose proof M_facts as (Hh & HM).
    set (s0 := PSt (crash_pmem 0 0) (0, 0) false (λ _, PIdle)).
    assert (R0 : preachable reread false s0).
    { apply preach_init. split; [exists 0%nat, 0%nat; split; [reflexivity|simpl; lia]|].
      split; [reflexivity|]. split; [reflexivity|]. unfold RF.in_range. simpl. lia. }
    (* t0: lines 1, 2, 3 *)
    let x := cur R0 in pose proof (preach_step _ _ _ _ R0 (st_line1 _ _ x 0 eq_refl)) as R1. norm R1.
    let x := cur R1 in pose proof (preach_step _ _ _ _ R1 (st_line2 _ _ x 0 0 0 0 eq_refl ltac:(pg))) as R2. norm R2.
    let x := cur R2 in pose proof (preach_step _ _ _ _ R2 (st_line3 _ _ x 0 0 0 0 0 0 eq_refl ltac:(pg) eq_refl)) as R3. norm R3.
    (* t1: line 1 *)
    let x := cur R3 in pose proof (preach_step _ _ _ _ R3 (st_line1 _ _ x 1 eq_refl)) as R4. norm R4.
    (* a Mirror CAS: NVMM (1, 1), not written back *)
    let x := cur R4 in pose proof (preach_step _ _ _ _ R4 (st_write _ _ x 1 1 eq_refl eq_refl
                                     ltac:(pcomp; rewrite Z.mod_small; lia))) as R5. norm R5.
    (* t1: line 2, line 4 (outside the window), line 5 *)
    let x := cur R5 in pose proof (preach_step _ _ _ _ R5 (st_line2 _ _ x 1 0 0 0 eq_refl ltac:(pg))) as R6. norm R6.
    let x := cur R6 in pose proof (preach_step _ _ _ _ R6 (st_line4_skip _ _ x 1 0 0 1 1 0 eq_refl ltac:(pg)
                                     (λ _, eq_refl) ltac:(discriminate) not_window_0_1)) as R7. norm R7.
    let x := cur R7 in pose proof (preach_step _ _ _ _ R7 (st_line5_ok _ _ x 1 0 0 1 1 0 eq_refl ltac:(pg) eq_refl)) as R8. norm R8.
    let x := cur R8 in assert (Hok : p_crash_ok (nvmm x) (λ _, 1%nat)).
    { intros L HL. assert (L = 0%nat) as -> by (revert HL; vm_compute; lia). vm_compute. lia. }
    let x := cur R8 in exists x, (λ _, 1%nat).
    let x := cur R8 in
      eexists (PSt (crash_pmem (p_image fline (nvmm x) (λ _, 1%nat) VAL) (p_image fline (nvmm x) (λ _, 1%nat) SEQ))
                   (0, 0) false (λ _, PIdle)).
    split; [exact R8|]. split; [reflexivity|]. split; [reflexivity|]. split; [pcomp; reflexivity|].
    split; [exact Hok|]. split; [pcomp; reflexivity|]. split.
    { intros (n & Hn & E). revert Hn E. vm_compute. intros Hn.
      destruct n as [|[|n]]; [| |lia]; vm_compute; congruence. }
    split; [apply st_crash; [exact Hok|unfold RF.in_range; simpl; lia]|].
    pcomp. reflexivity.
  Qed.

  (** ** Finding R2: without the DRAM re-read, Claim 2 fails *)

  (** After a crash NVMM holds (0, 0) and DRAM (1, wtop + 1), garbage just
      outside line 4's window.  u and t read DRAM at line 1; u reads NVMM,
      skips line 4.1 and copies (0, 0) to DRAM at line 5 (written back and
      fenced first when [flush] holds): the field is recovered.  A Mirror CAS
      writes (5, 1) to NVMM and DRAM.  t reads NVMM (5, 1): now
      (wtop + 1) − 1 is inside the window, and t's line 4.1 CAS moves NVMM's
      sequence to wtop + 2 while DRAM holds 1.  No thread sat through more
      than one modification of the field. *)
  Theorem px_r2_as_written_breaks_claim2 flush :
    ∃ s, preachable false flush s ∧ recovered s = true ∧ nv_mods s = 2 ∧ ¬ px_mirror_inv s.
  Proof.
    pose proof M_facts as (Hh & HM). pose proof (RF.wtop_bounds k strict) as Hwt.
    remember (RF.wtop k strict + 1) as d eqn:Hd.
    assert (Hq : Z.of_nat (Z.to_nat ((d + 1) mod M)) = (d + 1) mod M).
    { apply Z2Nat.id, Z.mod_pos_bound. lia. }
    remember (Z.to_nat ((d + 1) mod M)) as q eqn:Hq'. clear Hq'.
    assert (Hw0 : ¬ RF.window k strict d 0).
    { unfold RF.window. rewrite Z.sub_0_r, Z.mod_small by lia. lia. }
    assert (Hw1 : RF.window k strict d 1).
    { unfold RF.window. rewrite Z.mod_small by lia. lia. }
    set (s0 := PSt (crash_pmem 0 0) (1, d) false (λ _, PIdle)).
    assert (R0 : preachable false flush s0).
    { apply preach_init. split; [exists 0%nat, 0%nat; split; [reflexivity|simpl; lia]|].
      split; [reflexivity|]. split; [reflexivity|]. unfold RF.in_range. simpl. lia. }
    (* u = 0 and t = 1: line 1 *)
    let x := cur R0 in pose proof (preach_step _ _ _ _ R0 (st_line1 _ _ x 0 eq_refl)) as R1. norm R1.
    let x := cur R1 in pose proof (preach_step _ _ _ _ R1 (st_line1 _ _ x 1 eq_refl)) as R2. norm R2.
    (* u: line 2, line 4 (outside the window) *)
    let x := cur R2 in pose proof (preach_step _ _ _ _ R2 (st_line2 _ _ x 0 1 d 0 eq_refl ltac:(pg))) as R3. norm R3.
    let x := cur R3 in pose proof (preach_step _ _ _ _ R3 (st_line4_skip false _ x 0 1 d 0 0 0 eq_refl ltac:(pg)
                                     (λ H, ltac:(discriminate H)) ltac:(intros E; injection E; lia) Hw0)) as R4. norm R4.
    (* u: the write-back and fence of R1's fix, if present *)
    destruct flush;
      [let x := cur R4 in pose proof (preach_step _ _ _ _ R4 (st_pwb _ _ x 0 1 d 0 0 0 eq_refl)) as R4a; norm R4a;
       let x := cur R4a in pose proof (preach_step _ _ _ _ R4a (st_fence _ _ x 0 1 d 0 0 0 eq_refl)) as R4b;
       norm R4b; clear R4; rename R4b into R4|].
    (* u: line 5, the first return *)
    all: let x := cur R4 in pose proof (preach_step _ _ _ _ R4 (st_line5_ok _ _ x 0 1 d 0 0 0 eq_refl ltac:(pg) eq_refl)) as R5.
    all: norm R5.
    (* a Mirror CAS: NVMM (5, 1), then DRAM *)
    all: let x := cur R5 in pose proof (preach_step _ _ _ _ R5 (st_write _ _ x 5 1 eq_refl eq_refl
                                          ltac:(pcomp; rewrite Z.mod_small; lia))) as R6.
    all: norm R6.
    all: let x := cur R6 in pose proof (preach_step _ _ _ _ R6 (st_help _ _ x 7 eq_refl
                                          ltac:(pcomp; rewrite Z.mod_small; lia))) as R7.
    all: norm R7.
    (* t: line 2 reads (5, 1); d − 1 is inside the window; line 4.1 succeeds *)
    all: let x := cur R7 in pose proof (preach_step _ _ _ _ R7 (st_line2 _ _ x 1 1 d 0 eq_refl ltac:(pg))) as R8.
    all: norm R8.
    all: let x := cur R8 in pose proof (preach_step _ _ _ _ R8 (st_line4 false _ x 1 1 d 5 1 0 eq_refl ltac:(pg)
                                          (λ H, ltac:(discriminate H)) ltac:(intros E; injection E; lia) Hw1)) as R9.
    all: norm R9.
    all: let x := cur R9 in pose proof (preach_step _ _ _ _ R9 (st_line41_ok _ _ x 1 1 d 5 1 0 q eq_refl ltac:(pg)
                                          ltac:(pcomp; reflexivity) Hq)) as R10.
    all: norm R10.
    all: let x := cur R10 in exists x; split; [exact R10|]; split; [reflexivity|]; split; [pg|].
    all: unfold px_mirror_inv; pcomp; rewrite Hq; intros [[Hs|Hs] _].
    all: rewrite ?(Z.mod_small 1), ?(Z.mod_small (1 + 1)) in Hs by lia.
    all: assert (d + 1 = M ∨ d + 1 < M) as [He|He] by lia;
         [rewrite He, Z_mod_same_full in Hs; lia|rewrite Z.mod_small in Hs by lia; lia].
  Qed.
End px.
