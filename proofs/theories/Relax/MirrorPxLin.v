(** * Mirror's load, CAS and store (fixes M1, M2) and recoverField (fixes R1, R2) over histories

    A data field of RELAX's persistent atomic (seed 002: Mirror's
    [compare_exchange_strong], Algorithm 4.1; [recoverField], Algorithm
    6.2; the tracking variants, §6.4), as [impl/perdure-relax/src/patomic.rs]
    runs it, on Px86's line-granular persistence as [RecoverFieldPx.v] has
    it, with any number of threads and any number of full crashes: every
    run's history ([Core/History.v]) is durably linearizable
    ([Core/DurableLin.v]) for a register with load, CAS and store.

    The state ([st]): the field's NVMM line as the sequence [ws] of its
    writes since the last crash (the crash image first), their sequence
    numbers unbounded naturals; the line's mark [mk] (every crash keeps at
    least the first [mk] writes); each thread's pending write-back [pw]
    (the line's length when it issued [pwb]; its next [pfence] raises the
    mark to it: the reading of [Core/PxPersist.v]); DRAM's pair [dr]; [rec],
    some [recover_field] on the field returned since the last crash
    (Tracking.v's ghost [ret]); the threads [th]; the next operation id
    [nid].  Three ghost fields, written by the steps and read by no guard:
    [xh], the history with its linearization points ([XL]); [infl], the
    operation whose NVMM write DRAM does not show yet; [gd], DRAM's pair
    right after the last crash (its garbage).

    The steps ([step]; seed line, then the Rust function of patomic.rs
    with its line), each atomic:
    - [s_invoke]: an operation (load, CAS or store) starts: [Invoke] (the
      [trace_ev!(off, "Invoke")] of [Space::track_field], L360–L378);
    - [s_load], [s_cas0], [s_store0]: the tracking step is over and the
      first access happens, only once the field is recovered ([rec]; see
      "Tracking" below): a load reads DRAM's value ([PAtomic::load],
      [tracked_val], L198–L209: its point), a CAS enters Mirror's loop
      ([PAtomic::compare_exchange]), a store reads its first expected
      value from DRAM ([PAtomic::store], [expected], L224–L233);
    - [s_l5]: L5–L7, NVMM's pair in one read ([Space::read_nvmm], L412);
    - [s_l9_help], [s_l9_wait], [s_l9_fail_cas], [s_l9_fail_store],
      [s_l9_go]: L9–L11, DRAM's pair (L414), then the local decisions:
      L18, NVMM one write ahead: help (L424); L27, other sequences: retry
      (L432); L30–L33, NVMM holds another value: a CAS returns it (L438: its
      point), a store retries expecting it ([Space::cas_loop], L309–L316);
      else on to L37;
    - [s_hpwb], [s_hfence], [s_hcas_ok], [s_hcas_fail]: L19, L20, L24 (help:
      write-back, fence, DRAM DWCAS from the DRAM pair read to the NVMM pair
      read; L425–L427), then retry;
    - [s_l40_ok], [s_l40_fail]: L37–L40, NVMM DWCAS to [(new, seq + 1)]
      (L443); on failure retry from the top: the fix of **M1** (L480–L483;
      the published L46–L47, help with the L9 pair [d] kept in [PL40] and
      return false, is [Relax/MirrorPxBugs.v]'s [step_aw], refuted there);
    - [s_wpwb], [s_wfence]: L41, L42 (L450–L451);
    - [s_l44_ok], [s_l44_fail]: L44, DRAM DWCAS from the pair read at L9
      (L459); on failure the fix of **M2** ([Space::finish_dram_half],
      L495–L509): [s_m2_diff] (DRAM no longer that pair: return),
      [s_m2_same], [s_m2cas_ok], [s_m2cas_fail] (its DWCAS again);
    - [s_ret]: [Return];
    - [s_late1], [s_late2], [s_late3], [s_late_reread_fail], [s_late4],
      [s_late41_ok], [s_late41_fail], [s_late_pwb], [s_late_fence],
      [s_late5_ok], [s_late5_fail]: a call of [Space::recover_field]
      (L586–L604; [Space::recover_attempt], L523–L583), made by a thread
      between its invocation and its first access (the tracking step),
      step by step, by any number of threads, before or after another call
      returned: line 1, DRAM's pair (L524); line 2, NVMM's (L527); line 3,
      equal pairs: return (L530); the re-read of **R2**: DRAM changed, goto
      1 (L535); line 4, the window test ([Space::in_window], L514: with
      unbounded sequence numbers, NVMM's sequence below DRAM's) and line
      4.1, the CAS of NVMM's sequence word to DRAM's + 1 (L546–L570; its
      failure: goto 1); the write-back and fence of **R1** (L578–L579);
      line 5, the DRAM DWCAS (L593): return, or goto 1.  A return (line 3
      or 5) sets [rec]; a goto 1 goes back to the tracking step, from which
      the call starts again;
    - [s_crash]: NVMM keeps a prefix of the line's writes at least as long
      as the mark, DRAM holds any pair, every thread is gone, the field is
      not recovered ([space.rs] [Space::open], [dram.rs] [Dram::new] with
      [DramInit::Garbage]): [Crash].
    A run ([reach]) starts right after a crash that left the pair
    [(v0, q0)] in NVMM, under the mark, and any pair in DRAM.

    Linearization points (the ghost): a load at its DRAM read; a failed
    CAS at its L9 read (DRAM then shows NVMM's pair of L5, sequences being
    distinct); a successful CAS, or a store's successful inner CAS, when
    DRAM gets its pair (its own L44 or M2 DWCAS, a helper's L24, or the
    line 5 of a recover_field call that read DRAM after the field was
    recovered), or at the crash if the crash image keeps its NVMM write; a
    store's failed
    inner CASes have none.  The register's value ([absv]) is DRAM's once
    the field is recovered, NVMM's before.

    Proved, for every initial pair and every number of threads and crashes:
    - [mirror_px_lin_points]: in every reachable state the ghost points are
      a witness ([lin_points]) for the history [hist s] and the register
      [reg v0] (load returns the value; CAS(e, n) returns the value and
      installs [n] iff it was [e]; store(v) returns 0 and installs [v]);
    - [mirror_px_durably_linearizable]: every run's history is durably
      linearizable for [reg v0]: a completed operation took effect once,
      between its invoke and its return, a cut-off one at most once, and a
      crash loses no operation that returned (no buffered durability);
    - [mirror_px_wf]: every run's history is well formed ([History.wf]:
      fresh ids, one pending operation per thread, a [Return] only of a
      pending operation, no [recover] event: Mirror is not detectable, a
      cut-off operation stays cut off), from the invariant [winv] kept by
      [winv_step] ([step_cases]: how a step changes the history; the rest
      is [History.v]'s [counted_ops_step]);
    - [mirror_px_not_vacuous]: an explicit run of 2 threads and 30 steps
      whose history is a successful CAS (after a recover_field whose line
      4.1 moves NVMM's sequence past DRAM's garbage, R1's write-back and
      fence, line 5), a load returning its value, a CAS cut off by a crash
      that keeps its unflushed NVMM write (its point is in the witness: it
      took effect), a recover_field returning at line 3, and a load
      returning the cut-off CAS's value.
    Everything rests on the invariant [ginv] ([ginv_init], [step_ginv]):
    NVMM's writes have increasing sequence numbers; once recovered DRAM
    shows the last write or the one before, under the mark, and in the
    second case [infl] names the writer, which read DRAM's current pair;
    what each thread holds (its NVMM pair is one of the line's writes, its
    write-back covers the pair it helps with, a writer past L40 either is
    [infl] with DRAM unchanged or its point is placed; a recover_field call
    that read DRAM before the first return read the ghost [gd], DRAM's
    garbage; before the first return NVMM's writes all hold the crash
    image's value and line 4.1 added at most one, after it DRAM's sequence
    is at least [gd]'s, so a late line 4.1 never succeeds and a late line 5
    copies the write in flight, made durable by R1's write-back and
    fence); the points so far run the register to [absv].

    Tracking ([Relax/Tracking.v]): the model lets an operation make its
    first access only once [rec] holds, i.e. once some [recover_field] on
    the field returned since the last crash, and lets any invoked thread
    that has not accessed the field yet call [recover_field], step by step,
    before or after the first return (any interleaving).
    That is what Claim 1 gives for each of the five variants
    ([claim1_bitset], [claim1_markable], [claim1_hybrid], [claim1_zmarkable],
    [claim1_pseudo_bitset]: a query answers "recovered" only if a recover
    call on the object returned since the crash, or it is fresh), so the
    theorems hold whichever variant decides which fields are recovered and
    when.  The link is by citation: the two models are not composed in Coq,
    and objects allocated since the crash (Tracking.v's [fresh]) are not
    modelled here (the field exists at the run's start).

    What the model abstracts, and what is not covered:
    - sequence numbers are unbounded, so line 4's window is unbounded
      (any DRAM sequence ahead of NVMM's) and a garbage DRAM pair can never
      come back once NVMM's sequence moved past it: R2's re-read is
      modelled but the proof does not rely on it (Finding R2 is about the
      bounded window: [RecoverFieldPx.v]'s [px_r2_as_written_breaks_claim2]);
      the stall bound of Claim 2 is not needed.  [Tracking::PseudoBitset]
      skips line 4: after its zeroed DRAM ([gd] with sequence 0) the window
      never applies here, so its calls are these; its MSB is not modelled;
    - one field alone in its line (its write-backs flush only its own
      writes) and one field per run: several data fields sharing one line,
      whose write-backs flush each other's writes, are
      [Relax/MirrorPxFields.v], which shows every run of them to be, field
      by field, a run of this model, and gets the product register from
      [DurableLin.v]'s locality [durably_linearizable_local]; fields in
      separate lines are not modelled in one run;
    - sequence numbers are unbounded naturals (no wrap-around, no MSB of
      [PseudoBitset], whose recovered bit is not modelled), values
      naturals; a 16-byte read and a 16-byte DWCAS are atomic, NVMM's DWCAS
      persists atomically (PX86.md's assumption), steps are sequentially
      consistent (every write is a locked RMW);
    - the write-back and fence that [Space::mirror_cas] also runs after a
      failed L40 (L450–L451 precede the match) are left out: they only
      raise the mark, so the model allows more crash images, not fewer;
    - pointer fields (Algorithm 6.3's recovery mark, Algorithm 6.4's load,
      [Space::recover_field_ptr], the M2 case the mark makes reachable: here
      M2's DWCAS is modelled but never needed), [fetch_add], the batch of
      [Space::recover_fields], [PATIENCE] and the [Diverged] error,
      allocation and memory management;
    - liveness. *)
From stdpp Require Import base list.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.

(** ** The sequential specification: a register with load, CAS and store *)

Inductive mop : Type :=
| OLoad                 (* load: returns the value *)
| OCas (e n : nat)      (* compare_exchange(e, n): returns the value it found *)
| OStore (v : nat).     (* store(v): returns 0 (Rust: ()) *)

Definition ret (σ : nat) (op : mop) : nat :=
  match op with OLoad | OCas _ _ => σ | OStore _ => 0 end.
Definition post (σ : nat) (op : mop) : nat :=
  match op with OLoad => σ | OCas e n => if decide (σ = e) then n else σ | OStore v => v end.

Definition reg_step (σ : nat) (op : mop) (r : nat) (σ' : nat) : Prop := r = ret σ op ∧ σ' = post σ op.
Definition reg (v0 : nat) : seq_spec nat mop nat := SeqSpec v0 reg_step.

(** The register's run, computed. *)
Fixpoint rfin (σ : nat) (l : list (mop * nat)) : option nat :=
  match l with
  | [] => Some σ
  | (op, r) :: l' => if decide (r = ret σ op) then rfin (post σ op) l' else None
  end.

Lemma rfin_runs v0 σ l σ' : rfin σ l = Some σ' → runs (reg v0) σ l.
Proof.
  revert σ. induction l as [| [op r] l IH]; intros σ H; [constructor |].
  simpl in H. case_decide; [| done]. econstructor; [| by apply IH]. by split.
Qed.

Lemma rfin_app σ l1 l2 : rfin σ (l1 ++ l2) = rfin σ l1 ≫= λ σ1, rfin σ1 l2.
Proof.
  revert σ. induction l1 as [| [op r] l1 IH]; intros σ; [done |]. simpl.
  case_decide; simpl; [apply IH | done].
Qed.

Notation xev := (xevent mop nat).

Lemma eff_app (l1 l2 : list xev) : effects (points (l1 ++ l2)) = effects (points l1) ++ effects (points l2).
Proof. by rewrite points_app, effects_app. Qed.

(** ** The model *)

(** A pair [(value, sequence)], as in NVMM and DRAM. *)
Notation pair := (nat * nat)%type.

(** A writer's value to install and its result, for expected value [e]. *)
Definition newv (op : mop) (e : nat) : nat :=
  match op with OCas _ n => n | OStore v => v | OLoad => e end.
Definition retv (op : mop) (e : nat) : nat :=
  match op with OCas _ _ => e | _ => 0 end.
(** A writer's expected value: a CAS's own, a store's anything (its loop
    updates it). *)
Definition wr_ok (op : mop) (e : nat) : Prop :=
  match op with OCas e' _ => e' = e | OStore _ => True | OLoad => False end.

(** The writer's steps after its NVMM DWCAS (L40) succeeded. *)
Inductive wpc : Type := WPwb | WFence | WL44 | WM2 | WM2cas.

(** A thread's position inside an operation. *)
Inductive pcv : Type :=
| PStart                        (* invoked; tracking (and recovery) before the first access *)
| PRet (r : nat)                (* about to return [r] *)
| PL5 (e : nat)                 (* top of Mirror's loop, expected value [e]: about to read NVMM *)
| PL9 (e : nat) (p : pair)      (* read NVMM's pair [p] (L5–L7): about to read DRAM (L9–L11) *)
| PHpwb (e : nat) (p d : pair)  (* helping (L18): about to write back (L19) *)
| PHfence (e : nat) (p d : pair) (* about to fence (L20) *)
| PHcas (e : nat) (p d : pair)  (* about to DWCAS DRAM from [d] to [p] (L24) *)
| PL40 (e : nat) (p d : pair)   (* about to DWCAS NVMM from [p] to [(new, p.2 + 1)] (L37–L40);
                                   [d]: DRAM's pair read at L9 (the code's [(vv, vs)]), used only by
                                   the published L47 ([MirrorPxBugs.v]); here [d = p] in every
                                   reachable state (same sequence, [same_seq_dram]) *)
| PW (w : wpc) (e : nat) (d a : pair) (* L40 succeeded: [d] read from DRAM, [a] written to NVMM *)
(* inside a recover_field call made by the tracking step (the thread's
   operation is invoked and has not accessed the field yet): *)
| PRc2 (d : pair)               (* line 1 read DRAM's [d] *)
| PRc3 (d n : pair)             (* line 2 read NVMM's [n] *)
| PRpwb (d n : pair)            (* R1: about to write back *)
| PRfence (d n : pair)          (* R1: about to fence *)
| PR5 (d n : pair).             (* line 5: about to DWCAS DRAM from [d] to [n] *)

Inductive tst : Type := TIdle | TOp (i : opid) (op : mop) (pc : pcv).

Definition tid (x : tst) : option opid := match x with TIdle => None | TOp i _ _ => Some i end.

Record st : Type := St {
  ws : list pair;                 (* the field's NVMM writes since the last crash, the crash image first *)
  mk : nat;                       (* how many of them every crash keeps (the line's mark) *)
  pw : nat → nat;                 (* a thread's pending write-back: the line's length when issued *)
  dr : pair;                      (* DRAM's pair *)
  rec : bool;                     (* a recover_field on the field returned since the last crash *)
  th : nat → tst;                 (* the threads *)
  nid : nat;                      (* the next operation id *)
  xh : list xev;                  (* ghost: the history, with linearization points *)
  infl : option (opid * mop * nat); (* ghost: the write in NVMM not yet in DRAM, its point *)
  gd : pair;                      (* ghost: DRAM's pair right after the last crash *)
}.

Definition upd {A} (f : nat → A) (t : nat) (x : A) : nat → A :=
  λ t', if Nat.eqb t' t then x else f t'.
Lemma upd_same {A} (f : nat → A) t x : upd f t x t = x.
Proof. unfold upd. by rewrite Nat.eqb_refl. Qed.
Lemma upd_other {A} (f : nat → A) t x t' : t' ≠ t → upd f t x t' = f t'.
Proof. unfold upd. intros Hne. by rewrite (proj2 (Nat.eqb_neq t' t) Hne). Qed.

(** NVMM's visible pair: the last write of the line. *)
Definition nv (s : st) : pair := default (0, 0) (last (ws s)).

(** The points a DRAM copy of the write in flight inserts. *)
Definition ins (o : option (opid * mop * nat)) : list xev :=
  match o with Some (i, op, r) => [XL i op r] | None => [] end.

Definition sth (s : st) (t : nat) (x : tst) : st :=
  St (ws s) (mk s) (pw s) (dr s) (rec s) (upd (th s) t x) (nid s) (xh s) (infl s) (gd s).
Definition sxh (s : st) (l : list xev) : st :=
  St (ws s) (mk s) (pw s) (dr s) (rec s) (th s) (nid s) (xh s ++ l) (infl s) (gd s).
(** [pwb] of the line by [t] (it takes effect by [t]'s next fence). *)
Definition spwb (s : st) (t : nat) (x : tst) : st :=
  St (ws s) (mk s) (upd (pw s) t (length (ws s))) (dr s) (rec s) (upd (th s) t x) (nid s) (xh s) (infl s) (gd s).
(** [pfence] by [t]. *)
Definition sfence (s : st) (t : nat) (x : tst) : st :=
  St (ws s) (mk s `max` pw s t) (upd (pw s) t 0) (dr s) (rec s) (upd (th s) t x) (nid s) (xh s) (infl s) (gd s).
(** A successful DWCAS of DRAM to [a]: the write in flight takes effect. *)
Definition scopy (s : st) (t : nat) (x : tst) (a : pair) : st :=
  St (ws s) (mk s) (pw s) a (rec s) (upd (th s) t x) (nid s) (xh s ++ ins (infl s)) None (gd s).

Section model.
  Context (v0 : nat).

  Inductive step : st → st → Prop :=
  (* invocation: the operation starts; Rust: the [trace_ev!(off, "Invoke")] of track_field *)
  | s_invoke s t op :
      th s t = TIdle →
      step s (St (ws s) (mk s) (pw s) (dr s) (rec s) (upd (th s) t (TOp (nid s) op PStart))
                 (S (nid s)) (xh s ++ [XE (Invoke (nid s) t op)]) (infl s) (gd s))
  (* load: tracking done (the field is recovered), read DRAM (PAtomic::load, tracked_val) *)
  | s_load s t i :
      th s t = TOp i OLoad PStart → rec s = true →
      step s (sxh (sth s t (TOp i OLoad (PRet (dr s).1))) [XL i OLoad (dr s).1])
  (* CAS: tracking done (PAtomic::compare_exchange) *)
  | s_cas0 s t i e n :
      th s t = TOp i (OCas e n) PStart → rec s = true →
      step s (sth s t (TOp i (OCas e n) (PL5 e)))
  (* store: tracking done, first expected value read from DRAM (PAtomic::store, expected) *)
  | s_store0 s t i v :
      th s t = TOp i (OStore v) PStart → rec s = true →
      step s (sth s t (TOp i (OStore v) (PL5 (dr s).1)))
  (* return *)
  | s_ret s t i op r :
      th s t = TOp i op (PRet r) →
      step s (sxh (sth s t TIdle) [XE (Return i r)])
  (* L5–L7: read NVMM's pair (Space::read_nvmm) *)
  | s_l5 s t i op e :
      th s t = TOp i op (PL5 e) →
      step s (sth s t (TOp i op (PL9 e (nv s))))
  (* L9–L11 read DRAM's pair; L18: NVMM one ahead: help *)
  | s_l9_help s t i op e p :
      th s t = TOp i op (PL9 e p) → p.2 = S (dr s).2 →
      step s (sth s t (TOp i op (PHpwb e p (dr s))))
  (* L27: sequences differ otherwise: retry *)
  | s_l9_wait s t i op e p :
      th s t = TOp i op (PL9 e p) → p.2 ≠ S (dr s).2 → p.2 ≠ (dr s).2 →
      step s (sth s t (TOp i op (PL5 e)))
  (* L30–L33: NVMM holds another value: a CAS returns it ... *)
  | s_l9_fail_cas s t i e' n e p :
      th s t = TOp i (OCas e' n) (PL9 e p) → p.2 = (dr s).2 → p.1 ≠ e →
      step s (sxh (sth s t (TOp i (OCas e' n) (PRet p.1))) [XL i (OCas e' n) p.1])
  (* ... a store's loop tries again expecting it (Space::cas_loop) *)
  | s_l9_fail_store s t i v e p :
      th s t = TOp i (OStore v) (PL9 e p) → p.2 = (dr s).2 → p.1 ≠ e →
      step s (sth s t (TOp i (OStore v) (PL5 p.1)))
  (* L30: NVMM holds the expected value: go to L37 *)
  | s_l9_go s t i op e p :
      th s t = TOp i op (PL9 e p) → p.2 = (dr s).2 → p.1 = e →
      step s (sth s t (TOp i op (PL40 e p (dr s))))
  (* L19, L20: a helper's write-back and fence *)
  | s_hpwb s t i op e p d :
      th s t = TOp i op (PHpwb e p d) → step s (spwb s t (TOp i op (PHfence e p d)))
  | s_hfence s t i op e p d :
      th s t = TOp i op (PHfence e p d) → step s (sfence s t (TOp i op (PHcas e p d)))
  (* L24: the helper's DRAM DWCAS from [d] to [p], then retry *)
  | s_hcas_ok s t i op e p d :
      th s t = TOp i op (PHcas e p d) → dr s = d → step s (scopy s t (TOp i op (PL5 e)) p)
  | s_hcas_fail s t i op e p d :
      th s t = TOp i op (PHcas e p d) → dr s ≠ d → step s (sth s t (TOp i op (PL5 e)))
  (* L40: NVMM DWCAS from [p] to [(new, p.2 + 1)] *)
  | s_l40_ok s t i op e p d :
      th s t = TOp i op (PL40 e p d) → nv s = p →
      step s (St (ws s ++ [(newv op e, S p.2)]) (mk s) (pw s) (dr s) (rec s)
                 (upd (th s) t (TOp i op (PW WPwb e p (newv op e, S p.2)))) (nid s) (xh s)
                 (Some (i, op, retv op e)) (gd s))
  (* L46–L47 with the fix of M1: the DWCAS failed, retry from the top *)
  | s_l40_fail s t i op e p d :
      th s t = TOp i op (PL40 e p d) → nv s ≠ p → step s (sth s t (TOp i op (PL5 e)))
  (* L41, L42: the writer's write-back and fence *)
  | s_wpwb s t i op e d a :
      th s t = TOp i op (PW WPwb e d a) → step s (spwb s t (TOp i op (PW WFence e d a)))
  | s_wfence s t i op e d a :
      th s t = TOp i op (PW WFence e d a) → step s (sfence s t (TOp i op (PW WL44 e d a)))
  (* L44: DRAM DWCAS from [d] to [a] *)
  | s_l44_ok s t i op e d a :
      th s t = TOp i op (PW WL44 e d a) → dr s = d →
      step s (scopy s t (TOp i op (PRet (retv op e))) a)
  | s_l44_fail s t i op e d a :
      th s t = TOp i op (PW WL44 e d a) → dr s ≠ d → step s (sth s t (TOp i op (PW WM2 e d a)))
  (* the fix of M2 (Space::finish_dram_half): read DRAM; not [d] any more: return *)
  | s_m2_diff s t i op e d a :
      th s t = TOp i op (PW WM2 e d a) → dr s ≠ d → step s (sth s t (TOp i op (PRet (retv op e))))
  | s_m2_same s t i op e d a :
      th s t = TOp i op (PW WM2 e d a) → dr s = d → step s (sth s t (TOp i op (PW WM2cas e d a)))
  | s_m2cas_ok s t i op e d a :
      th s t = TOp i op (PW WM2cas e d a) → dr s = d →
      step s (scopy s t (TOp i op (PRet (retv op e))) a)
  | s_m2cas_fail s t i op e d a :
      th s t = TOp i op (PW WM2cas e d a) → dr s ≠ d → step s (sth s t (TOp i op (PW WM2 e d a)))
  (* a recover_field call, step by step, from the tracking step: line 1 *)
  | s_late1 s t i op :
      th s t = TOp i op PStart → step s (sth s t (TOp i op (PRc2 (dr s))))
  (* line 2 *)
  | s_late2 s t i op d :
      th s t = TOp i op (PRc2 d) → step s (sth s t (TOp i op (PRc3 d (nv s))))
  (* line 3: equal pairs, return (the field is recovered) *)
  | s_late3 s t i op d n :
      th s t = TOp i op (PRc3 d n) → n = d →
      step s (St (ws s) (mk s) (pw s) (dr s) true (upd (th s) t (TOp i op PStart)) (nid s) (xh s) (infl s) (gd s))
  (* R2's re-read: DRAM changed, goto 1 *)
  | s_late_reread_fail s t i op d n :
      th s t = TOp i op (PRc3 d n) → n ≠ d → dr s ≠ d → step s (sth s t (TOp i op PStart))
  (* R2's re-read: unchanged; line 4 outside the window *)
  | s_late4 s t i op d n :
      th s t = TOp i op (PRc3 d n) → n ≠ d → dr s = d → ¬ n.2 < d.2 →
      step s (sth s t (TOp i op (PRpwb d n)))
  (* line 4 in the window: line 4.1's CAS of NVMM's sequence word *)
  | s_late41_ok s t i op d n :
      th s t = TOp i op (PRc3 d n) → n ≠ d → dr s = d → n.2 < d.2 → (nv s).2 = n.2 →
      step s (St (ws s ++ [((nv s).1, S d.2)]) (mk s) (pw s) (dr s) (rec s)
                 (upd (th s) t (TOp i op (PRpwb d (n.1, S d.2)))) (nid s) (xh s) (infl s) (gd s))
  | s_late41_fail s t i op d n :
      th s t = TOp i op (PRc3 d n) → n ≠ d → dr s = d → n.2 < d.2 → (nv s).2 ≠ n.2 →
      step s (sth s t (TOp i op PStart))
  (* R1's write-back and fence *)
  | s_late_pwb s t i op d n :
      th s t = TOp i op (PRpwb d n) → step s (spwb s t (TOp i op (PRfence d n)))
  | s_late_fence s t i op d n :
      th s t = TOp i op (PRfence d n) → step s (sfence s t (TOp i op (PR5 d n)))
  (* line 5: DRAM DWCAS from [d] to [n]: return (the field is recovered), or goto 1 *)
  | s_late5_ok s t i op d n :
      th s t = TOp i op (PR5 d n) → dr s = d →
      step s (St (ws s) (mk s) (pw s) n true (upd (th s) t (TOp i op PStart)) (nid s) (xh s ++ ins (infl s)) None (gd s))
  | s_late5_fail s t i op d n :
      th s t = TOp i op (PR5 d n) → dr s ≠ d → step s (sth s t (TOp i op PStart))
  (* a full crash: NVMM keeps a prefix of the line's writes at least as
     long as its mark, DRAM holds anything, the threads are gone *)
  | s_crash s keep d :
      mk s ≤ keep → keep ≤ length (ws s) → 1 ≤ keep →
      step s (St [default (0, 0) (ws s !! pred keep)] 1 (λ _, 0) d false (λ _, TIdle) (nid s)
                 (xh s ++ (if decide (keep = length (ws s)) then ins (infl s) else []) ++ [XE Crash])
                 None d).

  (** A run starts right after a crash that left NVMM the pair [(v0, q0)]
      (under the mark) and DRAM any pair [d]. *)
  Definition init (q0 : nat) (d : pair) : st :=
    St [(v0, q0)] 1 (λ _, 0) d false (λ _, TIdle) 0 [] None d.

  Inductive reach : st → Prop :=
  | reach_init q0 d : reach (init q0 d)
  | reach_step s s' : reach s → step s s' → reach s'.

  (** The history of a state: its events without the points. *)
  Definition hist (s : st) : history mop nat := erase (xh s).
End model.

(** ** Lists of writes with increasing sequence numbers *)

Definition sorted (l : list pair) : Prop :=
  ∀ a b pa pb, l !! a = Some pa → l !! b = Some pb → a < b → pa.2 < pb.2.

Lemma sorted_same l a b pa pb :
  sorted l → l !! a = Some pa → l !! b = Some pb → pa.2 = pb.2 → a = b.
Proof.
  intros Hs Ha Hb E. destruct (decide (a < b)) as [Hlt|Hge].
  - pose proof (Hs _ _ _ _ Ha Hb Hlt). lia.
  - destruct (decide (b < a)) as [Hlt|Hge']; [| lia]. pose proof (Hs _ _ _ _ Hb Ha Hlt). lia.
Qed.

Lemma sorted_lt l a b pa pb :
  sorted l → l !! a = Some pa → l !! b = Some pb → pa.2 < pb.2 → a < b.
Proof.
  intros Hs Ha Hb E. destruct (decide (a < b)) as [|Hge]; [done |].
  destruct (decide (a = b)) as [->|Hne]; [simplify_eq; lia |].
  pose proof (Hs _ _ _ _ Hb Ha ltac:(lia)). lia.
Qed.

Lemma last_lookup (l : list pair) : l ≠ [] → l !! pred (length l) = Some (default (0, 0) (last l)).
Proof.
  intros Hne. destruct l as [|x l _] using rev_ind; [done |].
  rewrite last_snoc, app_length. simpl. replace (pred (length l + 1)) with (length l) by lia.
  by rewrite lookup_app_r, Nat.sub_diag by lia.
Qed.

Lemma sorted_last l a pa : sorted l → l ≠ [] → l !! a = Some pa → pa.2 ≤ (default (0, 0) (last l)).2.
Proof.
  intros Hs Hne Ha. pose proof (last_lookup l Hne) as Hl.
  pose proof (lookup_lt_Some _ _ _ Ha).
  destruct (decide (a = pred (length l))) as [->|]; [simplify_eq; lia |].
  pose proof (Hs _ _ _ _ Ha Hl ltac:(lia)). lia.
Qed.

Lemma sorted_snoc l q : sorted l → l ≠ [] → (default (0, 0) (last l)).2 < q.2 → sorted (l ++ [q]).
Proof.
  intros Hs Hne Hq a b pa pb Ha Hb Hab.
  pose proof (lookup_lt_Some _ _ _ Hb) as Hlb. rewrite app_length in Hlb. simpl in Hlb.
  destruct (decide (b < length l)).
  - rewrite lookup_app_l in Ha by lia. rewrite lookup_app_l in Hb by lia. by apply (Hs a b).
  - rewrite lookup_app_l in Ha by lia. rewrite lookup_app_r in Hb by lia.
    destruct (b - length l) as [|k]; simpl in Hb; [| by rewrite lookup_nil in Hb].
    injection Hb as <-. pose proof (sorted_last l a pa Hs Hne Ha). lia.
Qed.

Lemma lookup_snoc_l {A} (l : list A) x a y : l !! a = Some y → (l ++ [x]) !! a = Some y.
Proof. intros H. rewrite lookup_app_l; [done |]. by eapply lookup_lt_Some. Qed.

(** ** The invariant *)

Section inv.
  Context (v0 : nat).

  (** No point of operation [i] yet. *)
  Definition nopt (s : st) (i : opid) : Prop := ∀ op r, XL i op r ∉ xh s.

  (** The register's value: DRAM's once the field is recovered, NVMM's
      before. *)
  Definition absv (s : st) : nat := if rec s then (dr s).1 else (nv s).1.

  (** What the writer's write-back and fence have made durable so far. *)
  Definition wpers (s : st) (t : nat) (w : wpc) : Prop :=
    match w with
    | WPwb => True
    | WFence => pw s t = length (ws s)
    | _ => mk s = length (ws s)
    end.

  Definition pcinv (s : st) (t : nat) (i : opid) (op : mop) (pc : pcv) : Prop :=
    match pc with
    | PStart => nopt s i ∧ pw s t = 0
    | PRet r => XL i op r ∈ xh s ∧ pw s t = 0
    | PL5 e => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ pw s t = 0
    | PL9 e p => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ pw s t = 0 ∧ p ∈ ws s
    | PHpwb e p d => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ pw s t = 0 ∧ p ∈ ws s ∧ p.2 = S d.2
    | PHfence e p d => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ p.2 = S d.2 ∧
        ∃ w, ws s !! w = Some p ∧ w < pw s t
    | PHcas e p d => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ pw s t = 0 ∧ p.2 = S d.2 ∧
        ∃ w, ws s !! w = Some p ∧ w < mk s
    | PL40 e p _ => nopt s i ∧ wr_ok op e ∧ rec s = true ∧ pw s t = 0 ∧ p ∈ ws s ∧ p.1 = e ∧
        p.2 ≤ (dr s).2
    | PW w e d a => wr_ok op e ∧ rec s = true ∧ (w = WFence ∨ pw s t = 0) ∧ a = (newv op e, S d.2) ∧
        ((infl s = Some (i, op, retv op e) ∧ dr s = d ∧ nopt s i ∧ nv s = a ∧ wpers s t w) ∨
         (XL i op (retv op e) ∈ xh s ∧ d.2 < (dr s).2))
    | PRc2 d => nopt s i ∧ pw s t = 0 ∧ d.2 ≤ (dr s).2 ∧ (rec s = false → d = gd s)
    | PRc3 d n => nopt s i ∧ pw s t = 0 ∧ d.2 ≤ (dr s).2 ∧ n ∈ ws s ∧ (d = gd s ∨ d.2 ≤ n.2) ∧
        (rec s = false → d = gd s ∧ (d.2 ≤ n.2 → n = nv s))
    | PRpwb d n => nopt s i ∧ pw s t = 0 ∧ n ∈ ws s ∧ d.2 ≤ n.2 ∧ n ≠ d ∧
        (rec s = false → d = gd s ∧ n = nv s)
    | PRfence d n => nopt s i ∧ d.2 ≤ n.2 ∧ n ≠ d ∧ (rec s = false → d = gd s ∧ n = nv s) ∧
        ∃ w, ws s !! w = Some n ∧ w < pw s t
    | PR5 d n => nopt s i ∧ pw s t = 0 ∧ d.2 ≤ n.2 ∧ n ≠ d ∧ (rec s = false → d = gd s ∧ n = nv s) ∧
        ∃ w, ws s !! w = Some n ∧ w < mk s
    end.

  Definition tinv (s : st) (t : nat) : Prop :=
    match th s t with
    | TIdle => pw s t = 0
    | TOp i op pc => XE (Invoke i t op) ∈ xh s ∧ pcinv s t i op pc
    end.

  (** The write in flight: NVMM one write ahead of DRAM, by a writer past
      L40 that read DRAM's current pair. *)
  Definition infl_ok (s : st) : Prop :=
    ∃ i op r, infl s = Some (i, op, r) ∧ r = ret (dr s).1 op ∧ (nv s).1 = post (dr s).1 op ∧
      ∃ tw w e a, th s tw = TOp i op (PW w e (dr s) a) ∧ r = retv op e.

  Record ginv (s : st) : Prop := {
    g_ne : ws s ≠ [];
    g_sorted : sorted (ws s);
    g_mk : 1 ≤ mk s ∧ mk s ≤ length (ws s);
    g_pw : ∀ t, pw s t ≤ length (ws s);
    g_pre : rec s = false → infl s = None ∧ dr s = gd s ∧ (∀ p, p ∈ ws s → p.1 = (nv s).1) ∧
              (length (ws s) = 1 ∨ (gd s).2 < (nv s).2);
    g_gd : rec s = true → (gd s).2 ≤ (dr s).2;
    g_dram : rec s = true → ∃ j, ws s !! j = Some (dr s) ∧ j < mk s ∧
               ((S j = length (ws s) ∧ infl s = None) ∨ (S (S j) = length (ws s) ∧ infl_ok s));
    g_ids : ∀ t t' i, tid (th s t) = Some i → tid (th s t') = Some i → t = t';
    g_nid : ∀ t i, tid (th s t) = Some i → i < nid s;
    g_xl : ∀ i op r, XL i op r ∈ xh s → i < nid s;
    g_ok : prefix_ok point_ok (xh s);
    g_run : rfin v0 (effects (points (xh s))) = Some (absv s);
    g_th : ∀ t, tinv s t;
  }.

  Lemma tinv_frame s s' t :
    tinv s t → th s' t = th s t → pw s' t = pw s t → rec s' = rec s →
    (∀ w p, ws s !! w = Some p → ws s' !! w = Some p) → mk s ≤ mk s' → (dr s).2 ≤ (dr s').2 →
    (∀ x, x ∈ xh s → x ∈ xh s') →
    (∀ i, tid (th s t) = Some i → nopt s i → nopt s' i) →
    ((infl s' = infl s ∧ dr s' = dr s ∧ ws s' = ws s ∧ mk s' ≤ length (ws s')) ∨
     (∀ i op r, tid (th s t) = Some i → infl s ≠ Some (i, op, r))) →
    gd s' = gd s → (rec s = false → ws s' = ws s ∧ dr s' = dr s) →
    tinv s' t.
  Proof.
    intros Ht Hth Hpw Hrec Hws Hmk Hdr Hxh Hnopt Halt Hgd Hpre.
    assert (Hin : ∀ p, p ∈ ws s → p ∈ ws s').
    { intros p (w & Hw)%elem_of_list_lookup. apply elem_of_list_lookup. eauto. }
    unfold tinv in *. rewrite Hth, Hpw. destruct (th s t) as [|i op pc]; [done |].
    specialize (Hnopt i eq_refl). destruct Ht as [Hinv Hpc]. split; [auto |].
    destruct pc; simpl in *; rewrite ?Hrec, ?Hpw.
    - destruct Hpc as (? & ?). split; eauto.
    - destruct Hpc as (? & ?). split; eauto.
    - destruct Hpc as (? & ? & ? & ?). split_and!; eauto.
    - destruct Hpc as (? & ? & ? & ? & ?). split_and!; eauto.
    - destruct Hpc as (? & ? & ? & ? & ? & ?). split_and!; eauto.
    - destruct Hpc as (? & ? & ? & ? & w & ? & ?). split_and!; eauto.
    - destruct Hpc as (? & ? & ? & ? & ? & w & ? & ?). split_and!; eauto. exists w. split; eauto. lia.
    - destruct Hpc as (? & ? & ? & ? & ? & ? & ?). split_and!; eauto. lia.
    - destruct Hpc as (? & ? & ? & ? & [(Hi & Hd & Hn & Hnv & Hw)|(Hx & Hlt)]).
      + destruct Halt as [(Hi' & Hd' & Hws' & Hmk')|Hno].
        * split_and!; eauto. left. unfold nv, wpers in *. rewrite Hi', Hd', Hws'.
          split_and!; eauto. rewrite Hws' in Hmk'. destruct w; try done; lia.
        * exfalso. by apply (Hno i op (retv op e)).
      + split_and!; eauto. right. split; [auto | lia].
    - destruct Hpc as (? & ? & ? & Hg). rewrite Hgd. split_and!; eauto. lia.
    - destruct Hpc as (? & ? & ? & ? & Hor & Hg). rewrite Hgd. split_and!; eauto; [lia |].
      intros Hr. destruct (Hpre Hr) as (Hw & _). unfold nv. rewrite Hw. auto.
    - destruct Hpc as (? & ? & ? & ? & ? & Hg). rewrite Hgd. split_and!; eauto.
      intros Hr. destruct (Hpre Hr) as (Hw & _). unfold nv. rewrite Hw. auto.
    - destruct Hpc as (? & ? & ? & Hg & w & ? & ?). rewrite Hgd. split_and!; eauto.
      intros Hr. destruct (Hpre Hr) as (Hw & _). unfold nv. rewrite Hw. auto.
    - destruct Hpc as (? & ? & ? & ? & Hg & w & ? & ?). rewrite Hgd. split_and!; eauto; [| exists w; split; eauto; lia].
      intros Hr. destruct (Hpre Hr) as (Hw & _). unfold nv. rewrite Hw. auto.
  Qed.

  Lemma nv_same s s' : ws s' = ws s → nv s' = nv s.
  Proof. unfold nv. by intros ->. Qed.

  (** A step of thread [t] that changes no memory word but its own
      registers, its write-back, the mark, and appends its own events. *)
  Lemma local_step s t x l mk' pw' :
    ginv s →
    mk s ≤ mk' → mk' ≤ length (ws s) →
    (∀ t', t' ≠ t → pw' t' = pw s t') → pw' t ≤ length (ws s) →
    (tid x = None ∨ tid x = tid (th s t)) →
    (∀ i op r, XL i op r ∈ l → tid (th s t) = Some i) →
    prefix_ok point_ok (xh s ++ l) →
    rfin (absv s) (effects (points l)) = Some (absv s) →
    (∀ i op r w e a, infl s = Some (i, op, r) → th s t = TOp i op (PW w e (dr s) a) →
       ∃ w', x = TOp i op (PW w' e (dr s) a)) →
    tinv (St (ws s) mk' pw' (dr s) (rec s) (upd (th s) t x) (nid s) (xh s ++ l) (infl s) (gd s)) t →
    ginv (St (ws s) mk' pw' (dr s) (rec s) (upd (th s) t x) (nid s) (xh s ++ l) (infl s) (gd s)).
  Proof.
    intros Hg Hmk Hmk' Hpw Hpwt Hx Hl Hok Hrun Hw Ht.
    set (s' := St (ws s) mk' pw' (dr s) (rec s) (upd (th s) t x) (nid s) (xh s ++ l) (infl s) (gd s)).
    assert (Hnv : nv s' = nv s) by done.
    assert (Hids : ∀ t', t' ≠ t → ∀ i, tid (th s t') = Some i → ∀ op r, XL i op r ∈ l → False).
    { intros t' Hne i Hi op r Hin. apply Hne. eapply (g_ids _ Hg); [done |]. by eapply Hl. }
    destruct Hg as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
    split; simpl; try done.
    - lia.
    - intros t'. destruct (decide (t' = t)) as [->|]; [done | rewrite Hpw; auto].
    - intros Hr. destruct (Hdram Hr) as (j & Hj & Hjm & [H1|(H2 & i & op & r & Hi & Hr1 & Hr2 & tw & w & e & a & Htw & Hre)]).
      + exists j. split_and!; [done | lia | by left].
      + exists j. split_and!; [done | lia |]. right. split; [done |].
        exists i, op, r. rewrite Hnv. split_and!; try done.
        destruct (decide (tw = t)) as [->|Hne'].
        * destruct (Hw _ _ _ _ _ _ Hi Htw) as [w' ->]. exists t, w', e, a. unfold s'; simpl. by rewrite upd_same.
        * exists tw, w, e, a. unfold s'; simpl. by rewrite upd_other.
    - intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done.
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids0 t t2 i).
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids0 t1 t i).
      + apply Hids0.
    - intros t' i. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
      destruct Hx as [-> | ->]; [done |]. apply Hnid.
    - intros i op r [Hin|Hin]%elem_of_app; [by eapply Hxl |]. apply (Hnid t). by eapply Hl.
    - rewrite eff_app, rfin_app, Hrun0. simpl. unfold absv in *. simpl. done.
    - intros t'. destruct (decide (t' = t)) as [->|Hne']; [done |].
      apply (tinv_frame s); simpl; try done; rewrite ?upd_other by done; try done.
      + by rewrite Hpw.
      + intros y Hy. apply elem_of_app. by left.
      + intros i Hi Hn op r [Hin|Hin]%elem_of_app; [by apply (Hn op r) |].
        by apply (Hids t' Hne' i Hi op r).
      + left. split_and!; done.
  Qed.

  Lemma local_sth s t x :
    ginv s → tid x = tid (th s t) →
    (∀ i op r w e a, infl s = Some (i, op, r) → th s t = TOp i op (PW w e (dr s) a) →
       ∃ w', x = TOp i op (PW w' e (dr s) a)) →
    tinv (sth s t x) t → ginv (sth s t x).
  Proof.
    intros Hg Hx Hw Ht.
    assert (E : sth s t x = St (ws s) (mk s) (pw s) (dr s) (rec s) (upd (th s) t x) (nid s) (xh s ++ []) (infl s) (gd s)).
    { unfold sth. by rewrite app_nil_r. }
    rewrite E in Ht |- *. apply local_step; try done; try lia.
    all: first [apply (g_pw _ Hg) | by right | by intros ??? ?%elem_of_nil
               | rewrite app_nil_r; apply (g_ok _ Hg) | pose proof (g_mk _ Hg); lia].
  Qed.

  Lemma dram_in s : ginv s → rec s = true → dr s ∈ ws s.
  Proof. intros Hg Hr. destruct (g_dram _ Hg Hr) as (j & Hj & _). by eapply elem_of_list_lookup_2. Qed.

  Lemma same_seq_dram s p : ginv s → rec s = true → p ∈ ws s → p.2 = (dr s).2 → p = dr s.
  Proof.
    intros Hg Hr (a & Ha)%elem_of_list_lookup Hq. destruct (g_dram _ Hg Hr) as (j & Hj & _).
    pose proof (sorted_same _ _ _ _ _ (g_sorted _ Hg) Ha Hj Hq) as ->. congruence.
  Qed.

  Lemma dr_le_nv s : ginv s → rec s = true → (dr s).2 ≤ (nv s).2.
  Proof.
    intros Hg Hr. destruct (g_dram _ Hg Hr) as (j & Hj & _).
    exact (sorted_last _ _ _ (g_sorted _ Hg) (g_ne _ Hg) Hj).
  Qed.

  Lemma absv_rec s : rec s = true → absv s = (dr s).1.
  Proof. unfold absv. by intros ->. Qed.

  Lemma point_ok_xl s t i op r : ginv s → XE (Invoke i t op) ∈ xh s → nopt s i →
    prefix_ok point_ok (xh s ++ [XL i op r]).
  Proof.
    intros Hg Hinv Hn. apply prefix_ok_snoc. split; [apply Hg |]. split.
    - exists t. by apply elem_of_erase.
    - intros op' v'. apply Hn.
  Qed.

  Lemma tid_ids s t t' i : ginv s → tid (th s t) = Some i → tid (th s t') = Some i → t' = t.
  Proof. intros Hg H1 H2. symmetry. by apply (g_ids _ Hg t t' i). Qed.

  Lemma local_step0 s t x mk' pw' :
    ginv s →
    mk s ≤ mk' → mk' ≤ length (ws s) →
    (∀ t', t' ≠ t → pw' t' = pw s t') → pw' t ≤ length (ws s) →
    tid x = tid (th s t) →
    (∀ i op r w e a, infl s = Some (i, op, r) → th s t = TOp i op (PW w e (dr s) a) →
       ∃ w', x = TOp i op (PW w' e (dr s) a)) →
    tinv (St (ws s) mk' pw' (dr s) (rec s) (upd (th s) t x) (nid s) (xh s) (infl s) (gd s)) t →
    ginv (St (ws s) mk' pw' (dr s) (rec s) (upd (th s) t x) (nid s) (xh s) (infl s) (gd s)).
  Proof.
    intros Hg ?????? Ht. rewrite <- (app_nil_r (xh s)) in Ht |- *.
    apply local_step; try done.
    all: first [by right | by intros ??? ?%elem_of_nil | rewrite app_nil_r; apply (g_ok _ Hg)].
  Qed.

  Lemma nv_in s : ginv s → nv s ∈ ws s.
  Proof. intros Hg. eapply elem_of_list_lookup_2, last_lookup, (g_ne _ Hg). Qed.

  Lemma same_seq_nv s p : ginv s → p ∈ ws s → p.2 = (nv s).2 → p = nv s.
  Proof.
    intros Hg (a & Ha)%elem_of_list_lookup Hq. pose proof (last_lookup _ (g_ne _ Hg)) as Hl.
    pose proof (sorted_same _ _ _ _ _ (g_sorted _ Hg) Ha Hl Hq) as ->. unfold nv. congruence.
  Qed.

  (** The first return of a recover_field call: the threads' facts before
      it hold after it. *)
  Lemma tinv_recflip s s' t : tinv s t → rec s = false → th s' t = th s t → pw s' t = pw s t →
    ws s' = ws s → mk s ≤ mk s' → xh s' = xh s → gd s' = gd s → (gd s).2 ≤ (dr s').2 → tinv s' t.
  Proof.
    unfold tinv. intros Ht Hr Hth Hpw Hws Hmk Hxh Hgd Hle. rewrite Hth, Hpw, Hxh.
    assert (Hnv : nv s' = nv s) by (unfold nv; by rewrite Hws).
    destruct (th s t) as [|i op pc]; [done |]. destruct Ht as (Hinv & Hpc). split; [done |].
    unfold pcinv in *. unfold nopt in *. rewrite ?Hxh, ?Hws, ?Hgd, ?Hnv, ?Hpw.
    destruct pc; try (exfalso; intuition congruence).
    - done.
    - done.
    - destruct Hpc as (? & ? & ? & Hg). specialize (Hg Hr) as ->. split_and!; try done.
    - destruct Hpc as (? & ? & ? & ? & ? & Hg). destruct (Hg Hr) as (-> & Hn). split_and!; try done;
        try by left.
    - destruct Hpc as (? & ? & ? & ? & ? & Hg). destruct (Hg Hr) as (-> & ->). split_and!; try done.
    - destruct Hpc as (? & ? & ? & Hg & w & ? & ?). destruct (Hg Hr) as (-> & ->). split_and!; try done;
        eauto.
    - destruct Hpc as (? & ? & ? & ? & Hg & w & ? & ?). destruct (Hg Hr) as (-> & ->). split_and!; try done;
        exists w; split; [done | lia].
  Qed.

  (** DRAM gets the write in flight. *)
  Lemma copy_step s t x j iw opw rw tw w e a' :
    ginv s → rec s = true → ws s !! j = Some (dr s) → S (S j) = length (ws s) → S j < mk s →
    infl s = Some (iw, opw, rw) → rw = ret (dr s).1 opw → (nv s).1 = post (dr s).1 opw →
    th s tw = TOp iw opw (PW w e (dr s) a') → rw = retv opw e →
    tid x = tid (th s t) →
    tinv (scopy s t x (nv s)) t →
    ginv (scopy s t x (nv s)).
  Proof.
    intros Hg Hr Hj Hlen Hmk Hi Hr1 Hr2 Htw Hre Hx Ht.
    pose proof (g_th _ Hg tw) as Hwt. unfold tinv in Hwt. rewrite Htw in Hwt. simpl in Hwt.
    destruct Hwt as (Hwinv & Hwok & _ & Hwpw & Ha' & [(_ & _ & Hwn & Hwnv & _)|(_ & Hlt)]); [| lia].
    assert (Hlast : ws s !! S j = Some (nv s)).
    { unfold nv. rewrite <- (last_lookup (ws s) (g_ne _ Hg)). f_equal. lia. }
    assert (Hdiff : ∀ t', tid (th s t') = Some iw → t' = tw).
    { intros t' H. eapply (tid_ids s); [done | | done]. by rewrite Htw. }
    destruct Hg as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
    split; simpl; try done; try (intros; congruence).
    - intros _. pose proof (Hgd Hr). pose proof (Hs _ _ _ _ Hj Hlast ltac:(lia)). lia.
    - intros _. exists (S j). split_and!; [done | done | left; by split].
    - intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done.
      + rewrite Hx. intros ??. by apply (Hids0 t t2 i).
      + rewrite Hx. intros ??. by apply (Hids0 t1 t i).
      + apply Hids0.
    - intros t' i. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
      rewrite Hx. apply Hnid.
    - intros i op r [Hin|Hin]%elem_of_app; [by eapply Hxl |]. rewrite Hi in Hin.
      apply elem_of_list_singleton in Hin. simplify_eq. apply (Hnid tw). by rewrite Htw.
    - rewrite Hi. apply prefix_ok_snoc. split; [done |]. split.
      + exists tw. by apply elem_of_erase.
      + apply Hwn.
    - rewrite eff_app, rfin_app, Hrun0, Hi. simpl. unfold absv. rewrite Hr. simpl.
      case_decide as Hd; [| by exfalso]. rewrite Hr, Hr2. done.
    - intros t'. destruct (decide (t' = t)) as [->|Hne']; [done |].
      destruct (decide (t' = tw)) as [->|Hne''].
      + unfold tinv. simpl. rewrite upd_other, Htw by done. simpl. split.
        { apply elem_of_app. by left. }
        rewrite Hr. split_and!; try done. right. split.
        * apply elem_of_app. right. rewrite Hi. simpl. rewrite <- Hre, Hr1. by left.
        * rewrite Hwnv, Ha'. simpl. lia.
      + apply (tinv_frame s); simpl; try done; rewrite ?upd_other by done; try done.
        * rewrite Hwnv, Ha'. simpl. lia.
        * intros y Hy. apply elem_of_app. by left.
        * intros i Hti Hn op r [Hin|Hin]%elem_of_app; [by apply (Hn op r) |].
          rewrite Hi in Hin. apply elem_of_list_singleton in Hin. simplify_eq.
          by apply Hne'', Hdiff.
        * right. intros i op r Hti Hi'. rewrite Hi in Hi'. simplify_eq. by apply Hne'', Hdiff.
        * intros; congruence.
  Qed.
End inv.

Section preservation.
  Context (v0 : nat).

  Ltac thr Hg t H :=
    let Ht := fresh "Ht" in
    pose proof (g_th v0 _ Hg t) as Ht; unfold tinv in Ht; rewrite H in Ht; simpl in Ht.
  Ltac new_t := unfold tinv; simpl; rewrite upd_same; simpl.
  Ltac nopw H := intros ?????? _ Hc; rewrite H in Hc; discriminate.
  (* The pwb and the fence of the line a thread writes back before it goes
     on (the helper's, R1's): the same five obligations of [local_step0]. *)
  Ltac pwb_pending Hg H Hp :=
    (apply local_step0; try done; try lia; try (pose proof (g_mk _ _ Hg); lia));
    [ intros; by rewrite upd_other
    | by rewrite upd_same
    | by rewrite H
    | nopw H
    | new_t; rewrite upd_same; apply elem_of_list_lookup in Hp as [w Hwp];
      split_and!; try done; exists w; split; [done |]; by eapply lookup_lt_Some ].
  Ltac fence_pending Hg t H w :=
    pose proof (g_pw _ _ Hg t); pose proof (g_mk _ _ Hg);
    (apply local_step0; try done; try lia; try (pose proof (g_mk _ _ Hg); lia));
    [ intros; by rewrite upd_other
    | rewrite upd_same; lia
    | by rewrite H
    | nopw H
    | new_t; rewrite upd_same; split_and!; try done; exists w; split; [done | lia] ].

  (* L44 or M2's DWCAS succeeds: DRAM gets the pair the CAS put in NVMM and
     the CAS returns; the same obligations at both positions [wpc]. *)
  Ltac dram_cas_ok Hg t H s d a wpc :=
    let Ht := fresh "Ht" in
    pose proof (g_th v0 _ Hg t) as Ht; unfold tinv in Ht; rewrite H in Ht; simpl in Ht;
    destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & [(Hi & Hd & Hn & Hnv & Hwp)|(_ & Hlt)]);
      [| subst d; lia];
    simpl in Hwp; subst d a;
    destruct (g_dram _ _ Hg Hr) as (j & Hj & Hjm & [(Hlen & Hi0)|(Hlen & iw & opw & rw & Hi' & Hr1 & Hr2 & tw & ww & ew & a' & Htw & Hre)]);
      [congruence |];
    rewrite Hi in Hi'; simplify_eq;
    assert (tw = t) as -> by (eapply (tid_ids v0 s); [done | by rewrite H | by rewrite Htw]);
    rewrite H in Htw; simplify_eq; rewrite <- Hnv;
    eapply (copy_step v0 s t _ j iw opw (retv opw ew) t wpc ew); try done; [lia | by rewrite H |];
    new_t; split; [apply elem_of_app; by left |]; split; [| by destruct Hp0];
    apply elem_of_app; right; rewrite Hi; by left.

  (* [H] is a conjunction with a false equation between constructors among
     its parts (a thread's [rec s = true] after [rec s] was rewritten to
     [false]): taken apart until it is found, where [intuition congruence]
     searched the whole context (4.6 s of [step_ginv]). *)
  Ltac conj_absurd H :=
    exfalso; repeat match type of H with
      | _ ∧ _ => let Hc := fresh in destruct H as [Hc H]; try discriminate Hc end;
    discriminate H.

  Lemma ginv_init q0 d : ginv v0 (init v0 q0 d).
  Proof.
    split; simpl; try done; try lia; try (intros; lia).
    - intros a b pa pb Ha Hb Hab. destruct a as [|[|]], b as [|[|]]; simpl in *; simplify_eq; lia.
    - intros _. split_and!; try done; [| by left]. by intros p ->%elem_of_list_singleton.
    - by intros ??? ?%elem_of_nil.
    - apply prefix_ok_nil.
  Qed.

  Lemma step_ginv s s' : ginv v0 s → step s s' → ginv v0 s'.
  Proof.
    intros Hg Hst. destruct Hst.
    - (* invoke *)
      thr Hg t H.
      destruct Hg as [Hne Hs Hm Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
      split; simpl; try done.
      + intros Hr. destruct (Hdram Hr) as (j & Hj & Hjm & [?|(H2 & i & op' & r & Hi & Hr1 & Hr2 & tw & w & e & a & Htw & Hre)]);
          exists j; split_and!; try done; [by left |]. right. split; [done |].
        exists i, op', r. split_and!; try done. exists tw, w, e, a. simpl. rewrite upd_other; [done |].
        intros ->. congruence.
      + intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
          rewrite ?upd_same, ?upd_other by done; simpl; try done.
        * intros [= <-] ?. pose proof (Hnid t2 _ H1). lia.
        * intros ? [= <-]. pose proof (Hnid t1 _ H0). lia.
        * apply Hids0.
      + intros t' i. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; simpl.
        * intros [= <-]. lia.
        * intros ?%Hnid. lia.
      + intros i op' r [Hin|Hin]%elem_of_app; [pose proof (Hxl _ _ _ Hin); lia |].
        apply elem_of_list_singleton in Hin. discriminate.
      + apply prefix_ok_snoc. by split.
      + rewrite eff_app, rfin_app, Hrun0. done.
      + intros t'. destruct (decide (t' = t)) as [->|Hne'].
        * new_t. split; [apply elem_of_app; right; by left |]. split; [| done].
          intros op' r [Hin|Hin]%elem_of_app; [pose proof (Hxl _ _ _ Hin); lia |].
          apply elem_of_list_singleton in Hin. discriminate.
        * apply (tinv_frame s); simpl; rewrite ?upd_other by done; try done.
          -- intros y Hy. apply elem_of_app. by left.
          -- intros i _ Hn op' r [Hin|Hin]%elem_of_app; [by apply (Hn op' r) |].
             apply elem_of_list_singleton in Hin. discriminate.
          -- left. split_and!; try done. apply Hm.
    - (* load *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0). unfold sxh, sth. simpl.
      apply local_step; try done; try lia; try (pose proof (g_mk _ _ Hg); lia).
      + right. by rewrite H.
      + intros i' op r ?%elem_of_list_singleton. simplify_eq. by rewrite H.
      + by eapply point_ok_xl.
      + rewrite (absv_rec s H0). simpl. by rewrite decide_True.
      + nopw H.
      + new_t. split; [apply elem_of_app; by left |]. split; [| done].
        apply elem_of_app. right. by left.
    - (* cas0 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* store0 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* return *)
      thr Hg t H. destruct Ht as (Hinv & Hx & Hp0). unfold sxh, sth. simpl.
      apply local_step; try done; try lia; try (pose proof (g_mk _ _ Hg); lia).
      + by left.
      + intros i' op' r' ?%elem_of_list_singleton. discriminate.
      + apply prefix_ok_snoc. split; [apply Hg |]. by exists op.
      + by rewrite H.
      + new_t. done.
    - (* L5 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; try done. by apply (nv_in v0).
    - (* L9 help *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* L9 wait *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* L9 fail, CAS *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp). simpl in Hw. subst e'.
      pose proof (same_seq_dram v0 s p Hg Hr Hp H0) as Ep.
      unfold sxh, sth. simpl. apply local_step; try done; try lia; try (pose proof (g_mk _ _ Hg); lia).
      + right. by rewrite H.
      + intros i' op r ?%elem_of_list_singleton. simplify_eq. by rewrite H.
      + by eapply point_ok_xl.
      + rewrite (absv_rec s Hr), <- Ep. simpl. rewrite decide_True by done.
        by rewrite decide_False.
      + nopw H.
      + new_t. split; [apply elem_of_app; by left |]. split; [| done].
        apply elem_of_app. right. by left.
    - (* L9 fail, store *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* L9 go *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; try done. lia.
    - (* helper's pwb *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp & Hq). unfold spwb.
      pwb_pending Hg H Hp.
    - (* helper's fence *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hq & w & Hwp & Hlt). unfold sfence.
      fence_pending Hg t H w.
    - (* helper's DRAM DWCAS succeeds *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hq & w & Hwp & Hlt). subst d.
      destruct (g_dram _ _ Hg Hr) as (j & Hj & Hjm & [(Hlen & _)|(Hlen & iw & opw & rw & Hi & Hr1 & Hr2 & tw & ww & ew & a' & Htw & Hre)]).
      + exfalso. pose proof (sorted_lt _ _ _ _ _ (g_sorted _ _ Hg) Hj Hwp ltac:(lia)).
        pose proof (lookup_lt_Some _ _ _ Hwp). lia.
      + pose proof (sorted_lt _ _ _ _ _ (g_sorted _ _ Hg) Hj Hwp ltac:(lia)).
        pose proof (lookup_lt_Some _ _ _ Hwp).
        assert (w = S j) as -> by lia.
        assert (Ep : p = nv s).
        { unfold nv. pose proof (last_lookup _ (g_ne _ _ Hg)) as Hl.
          replace (pred (length (ws s))) with (S j) in Hl by lia. congruence. }
        subst p. eapply (copy_step v0 s t _ j iw opw rw tw ww ew a'); try done; [by rewrite H |].
        assert (Htw_ne : tw ≠ t) by (intros ->; congruence).
        assert (Hiw : iw ≠ i).
        { intros ->. apply Htw_ne. eapply (tid_ids v0 s); [done | by rewrite H | by rewrite Htw]. }
        new_t. split; [apply elem_of_app; by left |]. split_and!; try done.
        intros op' r' [Hin|Hin]%elem_of_app; [by apply (Hn op' r') |].
        rewrite Hi in Hin. apply elem_of_list_singleton in Hin. simplify_eq.
    - (* helper's DRAM DWCAS fails *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hq & w & Hwp & Hlt).
      apply local_sth; try done; [by rewrite H | nopw H |]. new_t. split_and!; done.
    - (* L40 succeeds *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp & Hpe & Hpd).
      destruct (g_dram _ _ Hg Hr) as (j & Hj & Hjm & [(Hlen & Hi0)|(Hlen & iw & opw & rw & Hi & Hr1 & Hr2 & tw & ww & ew & a' & Htw & Hre)]).
      2:{ exfalso. pose proof (last_lookup _ (g_ne _ _ Hg)) as Hl. fold (nv s) in Hl. rewrite H0 in Hl.
          replace (pred (length (ws s))) with (S j) in Hl by lia.
          pose proof (g_sorted _ _ Hg _ _ _ _ Hj Hl ltac:(lia)). lia. }
      assert (Ep : p = dr s).
      { pose proof (last_lookup _ (g_ne _ _ Hg)) as Hl. fold (nv s) in Hl. rewrite H0 in Hl.
        replace (pred (length (ws s))) with j in Hl by lia. congruence. }
      revert Ep. intros ->. set (q := (newv op e, S (dr s).2)).
      assert (Hnv' : default (0, 0) (last (ws s ++ [q])) = q) by by rewrite last_snoc.
      destruct Hg as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
      split; simpl; try done; try (intros; congruence).
      + by destruct (ws s).
      + apply sorted_snoc; try done. fold (nv s). rewrite H0. simpl. lia.
      + rewrite app_length. simpl. lia.
      + intros t'. rewrite app_length. simpl. pose proof (Hpw0 t'). lia.
      + intros _. exists j. split_and!; [by apply lookup_snoc_l | done |]. right.
        split; [rewrite app_length; simpl; lia |].
        exists i, op, (retv op e). split_and!; try done.
        * destruct op as [|e' n|v]; simpl in *; [done | by subst e' | done].
        * unfold nv. simpl. rewrite Hnv'. simpl.
          destruct op as [|e' n|v]; simpl in *; [done | subst e'; by rewrite decide_True | done].
        * exists t, WPwb, e, q. simpl. by rewrite upd_same.
      + intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
          rewrite ?upd_same, ?upd_other by done; try done.
        * intros ??. apply (Hids0 t t2 i'); [by rewrite H | done].
        * intros ??. apply (Hids0 t1 t i'); [done | by rewrite H].
        * apply Hids0.
      + intros t' i'. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
        intros ?. apply (Hnid t). by rewrite H.
      + unfold absv in *. rewrite Hr in Hrun0 |- *. done.
      + intros t'. destruct (decide (t' = t)) as [->|Hne'].
        * new_t. split; [done |]. split_and!; try done; try by right.
          all: try (left; split_and!; try done; unfold nv; simpl; by rewrite Hnv').
        * apply (tinv_frame s); simpl; rewrite ?upd_other by done; try done.
          -- intros. by apply lookup_snoc_l.
          -- right. intros. by rewrite Hi0.
          -- intros; congruence.
    - (* L40 fails: retry (M1) *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hw & Hr & Hp0 & Hp & Hpe & Hpd).
      apply local_sth; try done; [by rewrite H | nopw H |]. new_t. split_and!; done.
    - (* writer's pwb *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & Hdisj). unfold spwb.
      apply local_step0; try done; try lia; try (pose proof (g_mk _ _ Hg); lia).
      + intros. by rewrite upd_other.
      + by rewrite upd_same.
      + by rewrite H.
      + intros i' op' r w e' a' Hi' Hc. rewrite H in Hc. simplify_eq. by exists WFence.
      + new_t. rewrite upd_same. split; [done |]. split_and!; try done; [by left |].
        destruct Hdisj as [(? & ? & ? & ? & _)|?]; [left | by right]. split_and!; done.
    - (* writer's fence *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & Hdisj). unfold sfence.
      pose proof (g_pw _ _ Hg t). pose proof (g_mk _ _ Hg).
      apply local_step0; try done; try lia; try (pose proof (g_mk _ _ Hg); lia).
      + intros. by rewrite upd_other.
      + rewrite upd_same. lia.
      + by rewrite H.
      + intros i' op' r w e' a' Hi' Hc. rewrite H in Hc. simplify_eq. by exists WL44.
      + new_t. rewrite upd_same. split; [done |]. split_and!; try done; [by right |].
        destruct Hdisj as [(? & ? & ? & ? & Hwp)|?]; [left | by right]. split_and!; try done.
        simpl in *. lia.
    - (* L44 succeeds *)
      dram_cas_ok Hg t H s d a WL44.
    - (* L44 fails: the fix of M2 *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & [(Hi & Hd & Hn & Hnv & Hwp)|Hx]); [done |].
      destruct Hp0 as [Hp0|Hp0]; [done |].
      apply local_sth; try done; [by rewrite H | intros ?????? _ Hc; rewrite H in Hc; simplify_eq |].
      new_t. split_and!; try done; [by right | by right].
    - (* M2: DRAM moved on, return *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & [(Hi & Hd & Hn & Hnv & Hwp)|(Hx & _)]); [done |].
      destruct Hp0 as [Hp0|Hp0]; [done |].
      apply local_sth; try done; [by rewrite H | intros ?????? _ Hc; rewrite H in Hc; simplify_eq |].
      new_t. split_and!; done.
    - (* M2: DRAM still at [d] *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & Hdisj).
      destruct Hp0 as [Hp0|Hp0]; [done |].
      apply local_sth; try done; [by rewrite H | intros i' op' r w e' a' Hi' Hc; rewrite H in Hc; simplify_eq; by eexists |].
      new_t. split_and!; try done; try by right.
    - (* M2's DWCAS succeeds *)
      dram_cas_ok Hg t H s d a WM2cas.
    - (* M2's DWCAS fails *)
      thr Hg t H. destruct Ht as (Hinv & Hw & Hr & Hp0 & Ha & [(Hi & Hd & Hn & Hnv & Hwp)|Hx]); [done |].
      destruct Hp0 as [Hp0|Hp0]; [done |].
      apply local_sth; try done; [by rewrite H | intros ?????? _ Hc; rewrite H in Hc; simplify_eq |].
      new_t. split_and!; try done; [by right | by right].
    - (* recover_field: line 1 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; try done. intros Hr. by destruct (g_pre _ _ Hg Hr) as (_ & -> & _).
    - (* line 2 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hd & Hdg). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; try done; [by apply (nv_in v0) | |].
      + destruct (rec s) eqn:Hr; [right; pose proof (dr_le_nv v0 s Hg Hr); lia | left; by apply Hdg].
      + intros Hr. split; [by apply Hdg | done].
    - (* line 3: return *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hd & Hnw & Hor & Hpre_t). subst n.
      destruct (rec s) eqn:Hr.
      + assert (E : St (ws s) (mk s) (pw s) (dr s) true (upd (th s) t (TOp i op PStart)) (nid s) (xh s) (infl s) (gd s)
                    = sth s t (TOp i op PStart)) by (unfold sth; by rewrite Hr).
        rewrite E. apply local_sth; try done; [by rewrite H | nopw H |]. new_t. split_and!; done.
      + (* the first return: DRAM's garbage is NVMM's pair *)
        destruct (Hpre_t eq_refl) as (Hdg & Hnv). specialize (Hnv (le_n _)).
        destruct (g_pre _ _ Hg Hr) as (Hi0 & Hdr & Hval & Hlen).
        assert (Hl1 : length (ws s) = 1) by (destruct Hlen as [|Hlt]; [done | rewrite <- Hnv, Hdg in Hlt; lia]).
        pose proof (g_mk _ _ Hg) as Hm.
        destruct Hg as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
        split; simpl; try done; try (intros; congruence).
        * intros _. exists 0. split_and!; [| lia | by left].
          rewrite Hdr, <- Hdg, Hnv. unfold nv. rewrite <- (last_lookup _ Hne), Hl1. done.
        * intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
            rewrite ?upd_same, ?upd_other by done; try done.
          -- intros ??. apply (Hids0 t t2 i'); [by rewrite H | done].
          -- intros ??. apply (Hids0 t1 t i'); [done | by rewrite H].
          -- apply Hids0.
        * intros t' i'. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
          intros ?. apply (Hnid t). by rewrite H.
        * unfold absv in *. rewrite Hr in Hrun0. simpl. by rewrite Hdr, <- Hdg, Hnv.
        * intros t'. destruct (decide (t' = t)) as [->|Hne'].
          -- new_t. split_and!; done.
          -- apply (tinv_recflip s); simpl; rewrite ?upd_other by done; try done.
             rewrite Hdr. lia.
    - (* R2's re-read fails: goto 1 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & _). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* line 4, outside the window *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hd & Hnw & Hor & Hpre_t).
      apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; try done; [lia |]. intros Hr. destruct (Hpre_t Hr) as [-> Hnv].
      split; [done |]. apply Hnv. lia.
    - (* line 4.1 succeeds: before the first return only *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hd & Hnw & Hor & Hpre_t).
      destruct (rec s) eqn:Hr.
      { exfalso. destruct Hor as [->|]; [| lia]. pose proof (g_gd _ _ Hg Hr). pose proof (dr_le_nv v0 s Hg Hr). lia. }
      destruct (Hpre_t eq_refl) as [Hdg _].
      destruct (g_pre _ _ Hg Hr) as (Hi0 & Hdr & Hval & Hlen).
      assert (En : n = nv s) by (apply (same_seq_nv v0); done).
      set (q := ((nv s).1, S d.2)).
      assert (Hnv' : default (0, 0) (last (ws s ++ [q])) = q) by by rewrite last_snoc.
      pose proof (g_mk _ _ Hg) as Hm.
      destruct Hg as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
      split; simpl; try done; try (intros; congruence).
      + by destruct (ws s).
      + apply sorted_snoc; try done. fold (nv s). rewrite <- En. simpl. lia.
      + rewrite app_length. simpl. lia.
      + intros t'. rewrite app_length. simpl. pose proof (Hpw0 t'). lia.
      + intros _. unfold nv. simpl. rewrite Hnv'. split_and!; try done.
        * intros p' [Hp'|Hp']%elem_of_app; [by apply Hval |].
          apply elem_of_list_singleton in Hp'. by subst p'.
        * right. simpl. rewrite <- Hdg. lia.
      + intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
          rewrite ?upd_same, ?upd_other by done; try done.
        * intros ??. apply (Hids0 t t2 i'); [by rewrite H | done].
        * intros ??. apply (Hids0 t1 t i'); [done | by rewrite H].
        * apply Hids0.
      + intros t' i'. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
        intros ?. apply (Hnid t). by rewrite H.
      + unfold absv in *. rewrite Hr in Hrun0. simpl. unfold nv. simpl. rewrite Hnv'. done.
      + intros t'. destruct (decide (t' = t)) as [->|Hne'].
        * new_t. split_and!; try done.
          -- apply elem_of_app. right. rewrite En. by left.
          -- simpl. lia.
          -- intros E. apply (f_equal snd) in E. simpl in E. lia.
          -- intros _. split; [done |]. unfold nv. simpl. rewrite Hnv'. by rewrite En.
        * pose proof (Hth t') as Ht'. unfold tinv in Ht' |- *. simpl. rewrite upd_other by done.
          destruct (th s t') as [|i' op' pc']; [done |].
          unfold pcinv, nopt in Ht' |- *. simpl. try rewrite Hr in Ht'.
          assert (Hin' : ∀ p, p ∈ ws s → p ∈ ws s ++ [q]) by (intros; apply elem_of_app; by left).
          destruct pc'; try conj_absurd Ht'; try done.
          -- destruct Ht' as (? & ? & ? & ? & ? & ? & Hg'). split_and!; eauto.
             intros _. destruct (Hg' eq_refl) as [Ed0 Hn']. split; [done |].
             intros Hle. specialize (Hn' Hle). exfalso. rewrite Hn', Ed0, <- Hdg, <- En in Hle. lia.
          -- destruct Ht' as (? & ? & ? & ? & ? & ? & Hg'). exfalso.
             destruct (Hg' eq_refl) as [Ed0 Hn']. rewrite Hn', Ed0, <- Hdg, <- En in *. lia.
          -- destruct Ht' as (? & ? & ? & ? & Hg' & _). exfalso.
             destruct (Hg' eq_refl) as [Ed0 Hn']. rewrite Hn', Ed0, <- Hdg, <- En in *. lia.
          -- destruct Ht' as (? & ? & ? & ? & ? & Hg' & _). exfalso.
             destruct (Hg' eq_refl) as [Ed0 Hn']. rewrite Hn', Ed0, <- Hdg, <- En in *. lia.
    - (* line 4.1 fails: goto 1 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & _). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* R1's write-back *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hp & Hq & Hne & Hpre_t). unfold spwb.
      pwb_pending Hg H Hp.
    - (* R1's fence *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hq & Hne & Hpre_t & w & Hwp & Hlt). unfold sfence.
      fence_pending Hg t H w.
    - (* line 5 succeeds: return *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & Hq & Hne & Hpre_t & w & Hwp & Hlt). subst d.
      destruct (rec s) eqn:Hr.
      + assert (E : St (ws s) (mk s) (pw s) n true (upd (th s) t (TOp i op PStart)) (nid s) (xh s ++ ins (infl s)) None (gd s)
                    = scopy s t (TOp i op PStart) n) by (unfold scopy; by rewrite Hr).
        rewrite E.
        destruct (g_dram _ _ Hg Hr) as (j & Hj & Hjm & [(Hlen & _)|(Hlen & iw & opw & rw & Hi & Hr1 & Hr2 & tw & ww & ew & a' & Htw & Hre)]).
        * exfalso. assert (Hlt' : (dr s).2 < n.2).
          { destruct (decide ((dr s).2 = n.2)) as [E'|]; [| lia].
            exfalso. apply Hne. apply (same_seq_dram v0 s n Hg Hr); [by eapply elem_of_list_lookup_2 | done]. }
          pose proof (sorted_lt _ _ _ _ _ (g_sorted _ _ Hg) Hj Hwp Hlt').
          pose proof (lookup_lt_Some _ _ _ Hwp). lia.
        * assert (Hlt' : (dr s).2 < n.2).
          { destruct (decide ((dr s).2 = n.2)) as [E'|]; [| lia].
            exfalso. apply Hne. apply (same_seq_dram v0 s n Hg Hr); [by eapply elem_of_list_lookup_2 | done]. }
          pose proof (sorted_lt _ _ _ _ _ (g_sorted _ _ Hg) Hj Hwp Hlt').
          pose proof (lookup_lt_Some _ _ _ Hwp).
          assert (w = S j) as -> by lia.
          assert (Ep : n = nv s).
          { unfold nv. pose proof (last_lookup _ (g_ne _ _ Hg)) as Hl.
            replace (pred (length (ws s))) with (S j) in Hl by lia. congruence. }
          subst n. eapply (copy_step v0 s t _ j iw opw rw tw ww ew a'); try done; [by rewrite H |].
          assert (Htw_ne : tw ≠ t) by (intros ->; congruence).
          assert (Hiw : iw ≠ i).
          { intros ->. apply Htw_ne. eapply (tid_ids v0 s); [done | by rewrite H | by rewrite Htw]. }
          new_t. split; [apply elem_of_app; by left |]. split; [| done].
          intros op' r' [Hin|Hin]%elem_of_app; [by apply (Hn op' r') |].
          rewrite Hi in Hin. apply elem_of_list_singleton in Hin. simplify_eq.
      + (* the first return: DRAM gets NVMM's pair, written back and fenced (R1) *)
        destruct (Hpre_t eq_refl) as (Hdg & Hnv).
        destruct (g_pre _ _ Hg Hr) as (Hi0 & Hdr & Hval & Hlen).
        pose proof (last_lookup _ (g_ne _ _ Hg)) as Hl. fold (nv s) in Hl. rewrite <- Hnv in Hl.
        pose proof (lookup_lt_Some _ _ _ Hwp) as Hw1.
        assert (w = pred (length (ws s))) as ->.
        { eapply (sorted_same _ _ _ _ _ (g_sorted _ _ Hg) Hwp Hl). done. }
        rewrite Hi0. simpl. rewrite app_nil_r.
        pose proof (g_mk _ _ Hg) as Hm.
        destruct Hg as [Hne' Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids0 Hnid Hxl Hok0 Hrun0 Hth].
        split; simpl; try done; try (intros; congruence).
        * intros _. exists (pred (length (ws s))). split_and!; [done | done | left; split; [lia | done]].
        * intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
            rewrite ?upd_same, ?upd_other by done; try done.
          -- intros ??. apply (Hids0 t t2 i'); [by rewrite H | done].
          -- intros ??. apply (Hids0 t1 t i'); [done | by rewrite H].
          -- apply Hids0.
        * intros t' i'. destruct (decide (t' = t)) as [->|]; rewrite ?upd_same, ?upd_other by done; [| apply Hnid].
          intros ?. apply (Hnid t). by rewrite H.
        * unfold absv in *. rewrite Hr in Hrun0. simpl. by rewrite Hnv.
        * intros t'. destruct (decide (t' = t)) as [->|Hne''].
          -- new_t. split_and!; done.
          -- apply (tinv_recflip s); simpl; rewrite ?upd_other by done; try done.
             rewrite <- Hdg. lia.
    - (* line 5 fails: goto 1 *)
      thr Hg t H. destruct Ht as (Hinv & Hn & Hp0 & _). apply local_sth; try done; [by rewrite H | nopw H |].
      new_t. split_and!; done.
    - (* crash *)
      pose proof (g_mk _ _ Hg) as Hm.
      assert (Hpts : prefix_ok point_ok (xh s ++ (if decide (keep = length (ws s)) then ins (infl s) else [])) ∧
                     (∀ i op r, XL i op r ∈ (if decide (keep = length (ws s)) then ins (infl s) else []) → i < nid s) ∧
                     rfin v0 (effects (points (xh s ++ (if decide (keep = length (ws s)) then ins (infl s) else []))))
                       = Some (default (0, 0) (ws s !! pred keep)).1).
      { destruct (rec s) eqn:Hr.
        - destruct (g_dram _ _ Hg Hr) as (j & Hj & Hjm & [(Hlen & Hi0)|(Hlen & iw & opw & rw & Hi & Hr1 & Hr2 & tw & ww & ew & a' & Htw & Hre)]).
          + rewrite Hi0. assert (pred keep = j) as -> by lia. rewrite Hj. simpl.
            rewrite decide_True by lia. simpl. rewrite app_nil_r. split_and!; [apply Hg | by intros ??? ?%elem_of_nil |].
            rewrite (g_run _ _ Hg). by rewrite absv_rec.
          + case_decide as Hk.
            * pose proof (g_th _ _ Hg tw) as Hwt. unfold tinv in Hwt. rewrite Htw in Hwt. simpl in Hwt.
              destruct Hwt as (Hwinv & _ & _ & _ & _ & [(_ & _ & Hwn & _)|(_ & Hlt)]); [| lia].
              rewrite Hi. simpl. split_and!.
              -- eapply point_ok_xl; done.
              -- intros ??? ?%elem_of_list_singleton. simplify_eq. apply (g_nid _ _ Hg tw). by rewrite Htw.
              -- rewrite eff_app, rfin_app, (g_run _ _ Hg), absv_rec by done. simpl.
                 rewrite decide_True by done. subst keep.
                 rewrite (last_lookup _ (g_ne _ _ Hg)). simpl. by rewrite <- Hr2.
            * assert (pred keep = j) as -> by lia. rewrite Hj. simpl. rewrite app_nil_r.
              split_and!; [apply Hg | by intros ??? ?%elem_of_nil |].
              rewrite (g_run _ _ Hg). by rewrite absv_rec.
        - destruct (g_pre _ _ Hg Hr) as (Hi0 & _ & Hval & _). rewrite Hi0.
          assert (Hnil : (if decide (keep = length (ws s)) then ins None else []) = ([] : list xev))
            by (by case_decide).
          rewrite Hnil, app_nil_r.
          split_and!; [apply Hg | by intros ??? ?%elem_of_nil |].
          rewrite (g_run _ _ Hg). unfold absv. rewrite Hr.
          destruct (lookup_lt_is_Some_2 (ws s) (pred keep)) as [p Hp]; [lia |]. rewrite Hp. simpl.
          rewrite (Hval p); [done | by eapply elem_of_list_lookup_2]. }
      destruct Hpts as (Hok & Hxl' & Hrun').
      split; simpl; try done; try (intros; congruence); try lia; try (intros; lia).
      + intros a b pa pb Ha Hb Hab. destruct a as [|[|]], b as [|[|]]; simpl in *; simplify_eq; lia.
      + intros _. split_and!; try done; [| by left]. by intros p ->%elem_of_list_singleton.
      + intros i op r Hin. rewrite app_assoc in Hin. apply elem_of_app in Hin as [Hin|Hin].
        * apply elem_of_app in Hin as [Hin|Hin]; [by eapply (g_xl _ _ Hg) | by eapply Hxl'].
        * apply elem_of_list_singleton in Hin. discriminate.
      + rewrite app_assoc. apply prefix_ok_snoc. by split.
      + rewrite app_assoc, eff_app, rfin_app, Hrun'. done.
  Qed.
End preservation.

(** ** Every run's history is durably linearizable *)

Section main.
  Context (v0 : nat).

  Lemma reach_ginv s : reach v0 s → ginv v0 s.
  Proof.
    induction 1 as [q0 d | s s' _ IH Hst]; [apply ginv_init | by eapply step_ginv].
  Qed.

  (** Every reachable state carries its history and a witness: the ghost
      points [xh s] are linearization points of [hist s] for the register
      that starts at the crash image's value [v0]. *)
  Theorem mirror_px_lin_points s : reach v0 s → lin_points (reg v0) (hist s) (xh s).
  Proof.
    intros Hr. pose proof (reach_ginv s Hr) as Hg. split; [done | apply Hg |].
    eapply rfin_runs, (g_run _ _ Hg).
  Qed.

  Theorem mirror_px_durably_linearizable s : reach v0 s → durably_linearizable (reg v0) (hist s).
  Proof. intros Hr. exists (xh s). by apply mirror_px_lin_points. Qed.
End main.

(** ** Not vacuous *)

Ltac cur R := match type of R with reach _ ?x => x end.
Ltac norm R := match type of R with reach ?v ?x => let y := eval vm_compute in x in change (reach v y) in R end.

(** The history of the run below: thread 0's CAS(0, 5) returns 0 (it
    succeeded), thread 1's load returns 5, thread 0's CAS(5, 9) is cut off
    by a crash that keeps its unflushed NVMM write, and after recovery
    thread 1's load returns 9. *)
Definition nv_hist : history mop nat :=
  [Invoke 0 0 (OCas 0 5); Return 0 0; Invoke 1 1 OLoad; Return 1 5; Invoke 2 0 (OCas 5 9); Crash;
   Invoke 3 1 OLoad; Return 3 9].

Lemma mirror_px_not_vacuous_run : ∃ s, reach 0 s ∧ hist s = nv_hist ∧ XL 2 (OCas 5 9) 5 ∈ xh s.
Proof.
  pose proof (reach_init 0 0 (7, 3)) as R.
  (* thread 0 invokes CAS(0, 5); its recover_field: line 1 reads DRAM's garbage (7, 3), line 2 NVMM's
     (0, 0), line 4.1 moves NVMM's sequence to 4, R1's write-back and fence, line 5 *)
  let x := cur R in pose proof (reach_step _ _ _ R (s_invoke x 0 (OCas 0 5) eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_late1 x 0 0 (OCas 0 5) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_late2 x 0 0 (OCas 0 5) (7, 3) eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_late41_ok x 0 0 (OCas 0 5) (7, 3) (0, 0) eq_refl
                                   ltac:(discriminate) eq_refl ltac:(simpl; lia) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_late_pwb x 0 0 (OCas 0 5) (7, 3) (0, 4) eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_late_fence x 0 0 (OCas 0 5) (7, 3) (0, 4) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_late5_ok x 0 0 (OCas 0 5) (7, 3) (0, 4) eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_cas0 x 0 0 0 5 eq_refl eq_refl)) as R. clear R1. norm R.
  rename R into R1.
  (* the CAS: L5, L9, L40, L41, L42, L44, return *)
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_l5 x 0 0 (OCas 0 5) 0 eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_l9_go x 0 0 (OCas 0 5) 0 (0, 4) eq_refl eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_l40_ok x 0 0 (OCas 0 5) 0 (0, 4) (0, 4) eq_refl eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_wpwb x 0 0 (OCas 0 5) 0 (0, 4) (5, 5) eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_wfence x 0 0 (OCas 0 5) 0 (0, 4) (5, 5) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_l44_ok x 0 0 (OCas 0 5) 0 (0, 4) (5, 5) eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_ret x 0 0 (OCas 0 5) 0 eq_refl)) as R. clear R1. norm R.
  (* thread 1 loads 5 *)
  let x := cur R in pose proof (reach_step _ _ _ R (s_invoke x 1 OLoad eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_load x 1 1 eq_refl eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_ret x 1 1 OLoad 5 eq_refl)) as R1. clear R. norm R1.
  (* thread 0's CAS(5, 9) writes NVMM (L40), no write-back yet *)
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_invoke x 0 (OCas 5 9) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_cas0 x 0 2 5 9 eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_l5 x 0 2 (OCas 5 9) 5 eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_l9_go x 0 2 (OCas 5 9) 5 (5, 5) eq_refl eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_l40_ok x 0 2 (OCas 5 9) 5 (5, 5) (5, 5) eq_refl eq_refl)) as R. clear R1. norm R.
  (* a crash keeps all four writes of the line (three are under its mark) *)
  let x := cur R in pose proof (reach_step _ _ _ R (s_crash x 4 (9, 6) ltac:(vm_compute; lia) ltac:(vm_compute; lia) ltac:(lia))) as R1.
  clear R. norm R1.
  (* thread 1 invokes a load; its tracking step calls recover_field, which
     finds DRAM equal to NVMM (line 3); the load returns 9 *)
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_invoke x 1 OLoad eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_late1 x 1 3 OLoad eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_late2 x 1 3 OLoad (9, 6) eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_late3 x 1 3 OLoad (9, 6) (9, 6) eq_refl eq_refl)) as R1. clear R. norm R1.
  let x := cur R1 in pose proof (reach_step _ _ _ R1 (s_load x 1 3 eq_refl eq_refl)) as R. clear R1. norm R.
  let x := cur R in pose proof (reach_step _ _ _ R (s_ret x 1 3 OLoad 9 eq_refl)) as R1. clear R. norm R1.
  eexists. split; [exact R1 |]. split; [vm_compute; reflexivity |].
  apply elem_of_list_In. vm_compute. repeat (first [by left | right]).
Qed.

(** The run's history is durably linearizable, the CAS the crash cut off
    is cut off, and it took effect: its point, with result 5, is in the
    witness. *)
Theorem mirror_px_not_vacuous :
  durably_linearizable (reg 0) nv_hist ∧ cut_off nv_hist 2 ∧
  ∃ s, reach 0 s ∧ hist s = nv_hist ∧ XL 2 (OCas 5 9) 5 ∈ xh s.
Proof.
  destruct mirror_px_not_vacuous_run as (s & Hr & Hh & Hin). split; [| split].
  - rewrite <- Hh. by apply mirror_px_durably_linearizable.
  - exists [Invoke 0 0 (OCas 0 5); Return 0 0; Invoke 1 1 OLoad; Return 1 5], [], [Invoke 3 1 OLoad; Return 3 9], 0, (OCas 5 9).
    split; [done |]. by intros v ?%elem_of_nil.
  - by exists s.
Qed.

(** ** The histories are well formed *)

(** [History.v]'s [pending_on_snoc] and [invoked_snoc], in the order the
    proofs here and in [MirrorMarksPxCrash.v] took them. *)
Lemma mp_pending_on_snoc {Op Val} (h : history Op Val) e t j :
  pending_on (h ++ [e]) t j ↔
    (pending_on h t j ∧ e ≠ Crash ∧ ∀ v, e ≠ Return j v) ∨ (∃ op, e = Invoke j t op).
Proof. rewrite pending_on_snoc. tauto. Qed.

Lemma mp_invoked_snoc {Op Val} (h : history Op Val) e i :
  invoked (h ++ [e]) i ↔ invoked h i ∨ ∃ t op, e = Invoke i t op.
Proof. apply invoked_snoc. Qed.

Lemma erase_ins o : erase (ins o) = [].
Proof. by destruct o as [[[??]?]|]. Qed.

Lemma tid_upd (f : nat → tst) t0 x t : tid x = tid (f t0) → tid (upd f t0 x t) = tid (f t).
Proof. intros Hx. unfold upd. destruct (Nat.eqb t t0) eqn:E; [| done]. apply Nat.eqb_eq in E. by subst. Qed.

(** How a step changes the history and the threads' operations. *)
Lemma step_cases s s' :
  step s s' →
  (hist s' = hist s ∧ nid s' = nid s ∧ ∀ t, tid (th s' t) = tid (th s t)) ∨
  (∃ t op, th s t = TIdle ∧ hist s' = hist s ++ [Invoke (nid s) t op] ∧ nid s' = S (nid s) ∧
     ∀ t', tid (th s' t') = if Nat.eqb t' t then Some (nid s) else tid (th s t')) ∨
  (∃ t i op r, th s t = TOp i op (PRet r) ∧ hist s' = hist s ++ [Return i r] ∧ nid s' = nid s ∧
     ∀ t', tid (th s' t') = if Nat.eqb t' t then None else tid (th s t')) ∨
  (hist s' = hist s ++ [Crash] ∧ nid s' = nid s ∧ ∀ t, th s' t = TIdle).
Proof.
  destruct 1.
  all: try (left; split_and!;
    [ unfold hist, sxh, sth, spwb, sfence, scopy; simpl; rewrite ?erase_app, ?erase_ins; simpl;
      rewrite ?app_nil_r; reflexivity
    | reflexivity
    | intros t'; unfold sxh, sth, spwb, sfence, scopy; simpl;
      first [reflexivity | apply tid_upd; by rewrite H] ]).
  - right; left. exists t, op. split_and!; [done | | done |].
    + unfold hist. simpl. by rewrite erase_app.
    + intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; right; left. exists t, i, op, r. split_and!; [done | | done |].
    + unfold hist, sxh, sth. simpl. by rewrite erase_app.
    + intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; right; right. split_and!; [| done | done].
    unfold hist. simpl. rewrite !erase_app. case_decide; simpl; rewrite ?erase_ins; done.
Qed.

Section wf.
  Context (v0 : nat).

  Record winv (s : st) : Prop := {
    w_wf : wf (hist s);
    w_inv : ∀ j, invoked (hist s) j → j < nid s;
    w_pend : ∀ t j, pending_on (hist s) t j → tid (th s t) = Some j;
    w_act : ∀ t i, tid (th s t) = Some i → pending_on (hist s) t i ∧ ∀ v, Return i v ∉ hist s;
    w_norec : ∀ i v, Recover i v ∉ hist s;
  }.

  Lemma winv_counted s : winv s ↔ counted_ops (hist s) (nid s) (λ t, tid (th s t)).
  Proof. split; intros []; by split. Qed.

  Lemma winv_init q0 d : winv (init v0 q0 d).
  Proof. apply winv_counted, counted_ops_nil. done. Qed.

  (** [History.v]'s argument, for the four kinds of step of [step_cases]. *)
  Lemma winv_step s s' : ginv v0 s → winv s → step s s' → winv s'.
  Proof.
    intros _ Hw%winv_counted Hst. apply winv_counted, (counted_ops_step _ _ _ _ _ _ Hw).
    destruct (step_cases s s' Hst) as
      [(Eh & En & Et)|[(t & op & Ht & Eh & En & Et)|[(t & i & op & r & Ht & Eh & En & Et)|(Eh & En & Et)]]];
      rewrite Eh, En.
    - by apply ops_step_same.
    - apply ops_step_invoke; [by rewrite Ht | done].
    - apply (ops_step_return _ _ _ t i); [by rewrite Ht | done].
    - apply ops_step_crash. intros u. by rewrite Et.
  Qed.

  Lemma reach_winv s : reach v0 s → ginv v0 s ∧ winv s.
  Proof.
    induction 1 as [q0 d | s s' _ [IHg IHw] Hst].
    - split; [apply ginv_init | apply winv_init].
    - split; [by eapply step_ginv | by eapply winv_step].
  Qed.

  (** Every run's history is well formed (HISTORY.md's rules, [History.wf]). *)
  Theorem mirror_px_wf s : reach v0 s → wf (hist s).
  Proof. intros Hr. apply (reach_winv s Hr). Qed.
End wf.
