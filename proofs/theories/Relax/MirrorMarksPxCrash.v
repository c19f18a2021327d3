(** * Mirror's pointer field with recovery marks, the M2 fix, crashes and persistence

    [MirrorMarksPxLin.v] proves a pointer field with recovery marks and the
    M2 fix durably linearizable on [MirrorMarksPx.v]'s crash-free model
    (right after the field's recovery, no persistence); [MirrorPxLin.v]
    proves a data field (no marks) durably linearizable with crashes and
    line-granular persistence.  This file has both in one model: ONE pointer
    field of RELAX's [MarkablePatomicPointer] (seed 002), any number of
    threads and of full crashes, each crash followed by the field's
    recovery with Algorithm 6.3's recovery marks, on line-granular
    persistence as [MirrorPxLin.v] models it ([Core/PxPersist.v]'s reading:
    the line's writes since the crash [cws], the mark [cmk] every crash
    keeps, each thread's pending write-back [cpw]; a crash keeps any
    prefix at least as long as the mark, DRAM becomes any pair, marked or
    not).  Every run's history ([Core/History.v], with [Crash] events) is
    durably linearizable ([Core/DurableLin.v]) for [MirrorPxLin.v]'s
    register [reg v0] (load returns the value; CAS(e, n) returns the value
    it found and installs [n] iff it was [e]).

    The steps ([cstep]; seed 002 line, then [impl/perdure-relax/src/patomic.rs]),
    each atomic (SC; 16-byte reads and DWCAS atomic):
    - [c_inv_cas], [c_inv_load]: [Invoke];
    - [c_start_cas], [c_start_load]: the tracking step is over and the first
      access happens, only once a [recover_field_ptr] on the field returned
      since the crash ([crec]): Claim 1 for the markable variants
      ([Tracking.v]'s [claim1_markable], [claim1_hybrid],
      [claim1_zmarkable]), by citation as in [MirrorPxLin.v];
    - a CAS ([PAtomicPtr::compare_exchange], L265–L275, running
      [Space::mirror_cas], L401–L485): [c_l5] L5–L7 ([read_nvmm]);
      [c_l9_help], [c_l9_wait], [c_l9_fail], [c_l9_go] L9–L11 and the
      decisions of L18, L27, L30–L33 (a failure returns NVMM's value: the
      re-load of L273 is a load, not modelled); [c_hpwb], [c_hfence],
      [c_hcas] the help's L19, L20, L24 (DRAM DWCAS from the L9 pair, mark
      included, to NVMM's unmarked pair); [c_l40_ok], [c_l40_fail] L37–L40
      with **M1**'s retry; [c_wpwb], [c_wfence] L41, L42; [c_l44] L44 (DRAM
      DWCAS from the L9 pair, L459); [c_m2], [c_m2cas] **M2**'s
      [Space::finish_dram_half] (L495–L509: re-read DRAM; while it has L9's
      sequence and L9's pointer up to the mark, DWCAS it to [after]);
    - a load ([PAtomicPtr::load] running [Space::load_ptr], L732–L759, under
      the markable variants Algorithm 6.4): [c_ld1] line 1 (an unmarked
      pointer is returned, line 3), [c_ld2] line 2.1, [c_ld3] lines
      2.3–2.4 (the unmarking DWCAS; goto 1 on failure); line 2.2 (the
      referent's [recover_node]) touches other fields;
    - [c_ret]: [Return];
    - a [recover_field_ptr] call (L609–L624, [Space::recover_attempt] with
      [line3 = false], L523–L583; Algorithm 6.3 with R1 and R2), by any
      idle thread at any time, before or after another call returned (in
      the code a [recover_node] of the field's node, run by a load of a
      marked pointer to it or by [recover_fields]; a nested call is another
      thread here): [c_q1] line 1 (L524), [c_q2] line 2 (L527),
      [c_q22_fail] / [c_q22_go] **R2**'s re-read (L534–L539), [c_q31_ok] /
      [c_q31_fail] lines 3–3.1 (the window, [Space::in_window] with
      unbounded sequences: NVMM's sequence below DRAM's; the CAS of NVMM's
      sequence word, L544–L570), [c_qpwb], [c_qfence] **R1**'s write-back
      and fence (L577–L580), [c_q4] line 4's DWCAS to
      [(mark(V_NV), S_NV)] ([Space::marked], the mark chosen freely), which
      sets [crec], or goto 1;
    - [c_crash]: NVMM keeps a prefix of the line's writes at least as long
      as the mark, DRAM holds any pair, the threads are gone, the field is
      not recovered: [Crash].
    A run starts right after a crash that left NVMM [(v0, q0)] under the
    mark and DRAM any pair ([cinit]).

    Linearization points (ghost fields [cxh], [cinfl], [cgd] no guard
    reads): a load where its result is fixed (line 1 on an unmarked
    pointer, line 2.3's successful DWCAS, which changes only the mark); a
    failed CAS at its L9–L11 read; a successful CAS when DRAM's sequence
    reaches its NVMM write ([cinfl] names it), by whichever DWCAS: its own
    L44 or [finish_dram_half]'s, a helper's L24, or line 4 of a
    [recover_field_ptr] call that read NVMM after the L40 (its write made
    durable by R1 first), or at the crash if the crash image keeps its
    write.  The register ([cabsv]) is DRAM's pointer once the field is
    recovered, NVMM's before.

    Proved, for every initial pair, every garbage DRAM pair, every number
    of threads and crashes:
    - [m2_fix_px_lin_points]: in every reachable state the ghost points are
      a witness ([lin_points]) for the history [chist] and [reg v0];
    - [m2_fix_px_durably_linearizable]: every run's history is durably
      linearizable for [reg v0] (a completed CAS or load took effect once,
      between its invoke and its return; a cut-off one at most once; a
      crash loses no CAS that returned);
    - [m2_fix_px_wf]: every run's history is well formed ([History.wf]:
      fresh ids, one pending operation per thread, a [Return] only of a
      pending operation, no [recover]: a cut-off operation stays cut off),
      from [winv] ([winv_step], [cstep_cases]: how a step changes the
      history; the rest is [History.v]'s [counted_ops_step]), as
      [MirrorPxLin.v]'s [mirror_px_wf];
    - [m2_fix_px_not_vacuous]: an explicit run, 3 threads, 43 steps, two
      crashes: a recovery moving NVMM's sequence past the garbage's (line
      3.1), R1, line 4 copying a marked pointer; M2's schedule (a CAS's L44
      fails because a load unmarked DRAM; [finish_dram_half] installs its
      pair, the load's point first); a CAS cut off by a crash that keeps
      its L40 write (its point is in the witness); recovery; a load of its
      value.
    Everything rests on the invariant [cinv] ([cinv_init], [cinv_step]):
    NVMM's writes have increasing sequences; once recovered DRAM's pointer
    and sequence are a durable write, the last one or the one before, and
    in the second case [cinfl] names its CAS, from DRAM's pointer, without
    a point yet; before the first return of a recovery DRAM is the crash's
    garbage and NVMM's writes all hold the crash image's pointer (line 3.1
    adds at most one); what each thread holds ([tok]: a writer past L40 is
    the write in flight with DRAM at its L9 pointer and sequence, mark
    aside, or has its point and DRAM is past it; a helper's and a
    recovery's pair is durable before their DRAM DWCAS; a recovery that
    read DRAM before the first return read the garbage); the points run
    the register to [cabsv].  [DurableLin.v]'s [rtc_preserved]
    ([creach_cinv]) and [durably_linearizable_erase] are used; the lists
    of writes are [MirrorPxLin.v]'s ([sorted]).

    Abstracts: one field alone in its line; unbounded sequence numbers (so
    the window is unbounded and a garbage pair never comes back; R2's
    bounded-window race is [RecoverFieldPx.v]'s); stores and [fetch_add]
    (CAS loops), the CAS's re-load on failure; [recover_node]'s effect on
    other fields, the tracking bitset and Claim 1 (by citation); the batch
    of [Space::recover_fields] (lines 1–3.1 of several fields, their
    write-backs, one fence, then their line 4s); the write-back and fence
    after a failed L40 (they only raise the mark);
    [PATIENCE] and the [Diverged] error; liveness. *)
From stdpp Require Import base list relations.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin MirrorMarksPx.

(** ** The model *)

(** DRAM's pair without its mark. *)
Definition dp (d : dpair) : nat * nat := (dv d, ds d).

(** A CAS's expected and new values. *)
Definition cas_e (op : mop) : nat := match op with OCas e _ => e | _ => 0 end.
Definition cas_n (op : mop) : nat := match op with OCas _ n => n | _ => 0 end.

(** The writer's steps after its L40 succeeded: L41, L42, L44, then
    [finish_dram_half]'s L497 read and L501 DWCAS from [now]. *)
Inductive cwp : Type := CWpwb | CWfence | CWl44 | CWm2 | CWm2cas (now : dpair).

(** A thread's position inside a CAS or a load. *)
Inductive cpc : Type :=
  | CStart                                (* invoked; tracking before the first access *)
  | CRet (r : nat)                        (* about to return [r] *)
  | C5                                    (* L5–L7 next: read NVMM's pair *)
  | C9 (p : nat * nat)                    (* L9–L11 next: read DRAM's pair *)
  | CHpwb (p : nat * nat) (d : dpair)     (* helping (L18): L19's write-back next *)
  | CHfence (p : nat * nat) (d : dpair)   (* L20's fence next *)
  | CHcas (p : nat * nat) (d : dpair)     (* L24 next: DRAM DWCAS d -> p *)
  | C40 (p : nat * nat) (d : dpair)       (* L37–L40 next: NVMM DWCAS p -> (n, p.2 + 1) *)
  | CW (w : cwp) (d : dpair) (a : nat * nat) (* past L40: [d] read at L9, [a] written to NVMM *)
  | CLd                                   (* Algorithm 6.4, line 1 next *)
  | CLd2 (v : nat)                        (* line 2.1 next *)
  | CLd3 (v q : nat).                     (* line 2.3 next: DRAM DWCAS (mark v, q) -> (v, q) *)

(** A thread's position inside a [recover_field_ptr] call (Algorithm 6.3
    with R1 and R2). *)
Inductive qpc : Type :=
  | Q1                                    (* line 1 next: read DRAM's pair *)
  | Q2 (d : dpair)                        (* line 2 next: read NVMM's pair *)
  | Q22 (d : dpair) (n : nat * nat)       (* R2's re-read of DRAM next, then lines 3–3.2 *)
  | Qpwb (d : dpair) (n : nat * nat)      (* R1's write-back next *)
  | Qfence (d : dpair) (n : nat * nat)    (* R1's fence next *)
  | Q4 (d : dpair) (n : nat * nat).       (* line 4 next: DRAM DWCAS d -> (mark n.1, n.2) *)

Inductive ctst : Type := CIdle | COp (i : opid) (op : mop) (pc : cpc) | CRec (pc : qpc).

Definition ctid (x : ctst) : option opid := match x with COp i _ _ => Some i | _ => None end.

Record cst : Type := CSt {
  cws : list (nat * nat);                 (* NVMM's writes since the last crash, the crash image first *)
  cmk : nat;                              (* how many of them every crash keeps (the line's mark) *)
  cpw : nat → nat;                        (* a thread's pending write-back: the line's length then *)
  cdr : dpair;                            (* DRAM's pair *)
  crec : bool;                            (* a recover_field_ptr on the field returned since the crash *)
  cth : nat → ctst;                       (* the threads *)
  cnid : nat;                             (* the next operation id *)
  cxh : list (xevent mop nat);            (* ghost: the history with its points *)
  cinfl : option (opid * mop * nat);      (* ghost: the write in NVMM not yet in DRAM, its point *)
  cgd : dpair;                            (* ghost: DRAM's pair right after the last crash *)
}.

(** NVMM's visible pair: the line's last write. *)
Definition cnv (s : cst) : nat * nat := default (0, 0) (last (cws s)).

(** A step of thread [t] that writes no NVMM word: its new state [x], the
    mark, the write-backs, DRAM, and what it appends to the history. *)
Definition cloc (s : cst) (t : nat) (x : ctst) (mk : nat) (pw : nat → nat) (d : dpair)
    (l : list (xevent mop nat)) : cst :=
  CSt (cws s) mk pw d (crec s) (upd (cth s) t x) (cnid s) (cxh s ++ l) (cinfl s) (cgd s).
Definition cset (s : cst) (t : nat) (x : ctst) : cst := cloc s t x (cmk s) (cpw s) (cdr s) [].
Definition cxs (s : cst) (t : nat) (x : ctst) (l : list (xevent mop nat)) : cst :=
  cloc s t x (cmk s) (cpw s) (cdr s) l.
(** [pwb] of the line (it takes effect by the thread's next fence). *)
Definition cpwb (s : cst) (t : nat) (x : ctst) : cst :=
  cloc s t x (cmk s) (upd (cpw s) t (length (cws s))) (cdr s) [].
(** [pfence]. *)
Definition cfence (s : cst) (t : nat) (x : ctst) : cst :=
  cloc s t x (cmk s `max` cpw s t) (upd (cpw s) t 0) (cdr s) [].
(** A DRAM DWCAS to [d] that moves DRAM's sequence: the write in flight
    takes effect. *)
Definition ccopy (s : cst) (t : nat) (x : ctst) (d : dpair) : cst :=
  CSt (cws s) (cmk s) (cpw s) d (crec s) (upd (cth s) t x) (cnid s) (cxh s ++ ins (cinfl s)) None (cgd s).
Definition cinvoke (s : cst) (t : nat) (op : mop) : cst :=
  CSt (cws s) (cmk s) (cpw s) (cdr s) (crec s) (upd (cth s) t (COp (cnid s) op CStart)) (S (cnid s))
      (cxh s ++ [XE (Invoke (cnid s) t op)]) (cinfl s) (cgd s).
(** An NVMM write [a] (L40, or line 3.1's new sequence). *)
Definition cnvw (s : cst) (t : nat) (x : ctst) (a : nat * nat) (o : option (opid * mop * nat)) : cst :=
  CSt (cws s ++ [a]) (cmk s) (cpw s) (cdr s) (crec s) (upd (cth s) t x) (cnid s) (cxh s) o (cgd s).
(** Line 4's DWCAS succeeds: DRAM gets [d], the field is recovered; if
    DRAM's sequence moves, the write in flight takes effect. *)
Definition cq4 (s : cst) (t : nat) (d : dpair) (same : bool) : cst :=
  CSt (cws s) (cmk s) (cpw s) d true (upd (cth s) t CIdle) (cnid s)
      (cxh s ++ if same then [] else ins (cinfl s)) (if same then cinfl s else None) (cgd s).

Inductive cstep : cst → cst → Prop :=
  (* an operation starts: [Invoke] *)
  | c_inv_cas s t e n : cth s t = CIdle → cstep s (cinvoke s t (OCas e n))
  | c_inv_load s t : cth s t = CIdle → cstep s (cinvoke s t OLoad)
  (* tracking: the first access, once the field is recovered *)
  | c_start_cas s t i e n : cth s t = COp i (OCas e n) CStart → crec s = true →
      cstep s (cset s t (COp i (OCas e n) C5))
  | c_start_load s t i : cth s t = COp i OLoad CStart → crec s = true →
      cstep s (cset s t (COp i OLoad CLd))
  (* L5–L7 *)
  | c_l5 s t i e n : cth s t = COp i (OCas e n) C5 → cstep s (cset s t (COp i (OCas e n) (C9 (cnv s))))
  (* L9–L11, L18: help *)
  | c_l9_help s t i e n p : cth s t = COp i (OCas e n) (C9 p) → p.2 = S (ds (cdr s)) →
      cstep s (cset s t (COp i (OCas e n) (CHpwb p (cdr s))))
  (* L27: retry *)
  | c_l9_wait s t i e n p : cth s t = COp i (OCas e n) (C9 p) → p.2 ≠ S (ds (cdr s)) → p.2 ≠ ds (cdr s) →
      cstep s (cset s t (COp i (OCas e n) C5))
  (* L30–L33: fail, returning NVMM's value (its point) *)
  | c_l9_fail s t i e n p : cth s t = COp i (OCas e n) (C9 p) → p.2 = ds (cdr s) → p.1 ≠ e →
      cstep s (cxs s t (COp i (OCas e n) (CRet p.1)) [XL i (OCas e n) p.1])
  (* on to L37 *)
  | c_l9_go s t i e n p : cth s t = COp i (OCas e n) (C9 p) → p.2 = ds (cdr s) → p.1 = e →
      cstep s (cset s t (COp i (OCas e n) (C40 p (cdr s))))
  (* L19, L20, L24 *)
  | c_hpwb s t i e n p d : cth s t = COp i (OCas e n) (CHpwb p d) →
      cstep s (cpwb s t (COp i (OCas e n) (CHfence p d)))
  | c_hfence s t i e n p d : cth s t = COp i (OCas e n) (CHfence p d) →
      cstep s (cfence s t (COp i (OCas e n) (CHcas p d)))
  | c_hcas s t i e n p d : cth s t = COp i (OCas e n) (CHcas p d) →
      cstep s (if decide (cdr s = d) then ccopy s t (COp i (OCas e n) C5) (DP p.1 false p.2)
               else cset s t (COp i (OCas e n) C5))
  (* L40, M1's retry *)
  | c_l40_ok s t i e n p d : cth s t = COp i (OCas e n) (C40 p d) → cnv s = p →
      cstep s (cnvw s t (COp i (OCas e n) (CW CWpwb d (n, S p.2))) (n, S p.2) (Some (i, OCas e n, e)))
  | c_l40_fail s t i e n p d : cth s t = COp i (OCas e n) (C40 p d) → cnv s ≠ p →
      cstep s (cset s t (COp i (OCas e n) C5))
  (* L41, L42 *)
  | c_wpwb s t i e n d a : cth s t = COp i (OCas e n) (CW CWpwb d a) →
      cstep s (cpwb s t (COp i (OCas e n) (CW CWfence d a)))
  | c_wfence s t i e n d a : cth s t = COp i (OCas e n) (CW CWfence d a) →
      cstep s (cfence s t (COp i (OCas e n) (CW CWl44 d a)))
  (* L44: DRAM DWCAS from the L9 pair *)
  | c_l44 s t i e n d a : cth s t = COp i (OCas e n) (CW CWl44 d a) →
      cstep s (if decide (cdr s = d) then ccopy s t (COp i (OCas e n) (CRet e)) (DP a.1 false a.2)
               else cset s t (COp i (OCas e n) (CW CWm2 d a)))
  (* M2's fix, finish_dram_half: L497–L500 *)
  | c_m2 s t i e n d a : cth s t = COp i (OCas e n) (CW CWm2 d a) →
      cstep s (cset s t (COp i (OCas e n)
                 (if decide (ds (cdr s) = ds d ∧ dv (cdr s) = dv d) then CW (CWm2cas (cdr s)) d a else CRet e)))
  (* L501–L507 *)
  | c_m2cas s t i e n now d a : cth s t = COp i (OCas e n) (CW (CWm2cas now) d a) →
      cstep s (if decide (cdr s = now) then ccopy s t (COp i (OCas e n) (CRet e)) (DP a.1 false a.2)
               else cset s t (COp i (OCas e n) (CW CWm2 d a)))
  (* Algorithm 6.4: line 1 (line 3: an unmarked pointer is returned, its point) *)
  | c_ld1 s t i : cth s t = COp i OLoad CLd →
      cstep s (if dm (cdr s) then cset s t (COp i OLoad (CLd2 (dv (cdr s))))
               else cxs s t (COp i OLoad (CRet (dv (cdr s)))) [XL i OLoad (dv (cdr s))])
  (* line 2.1 (2.2, the referent's recoverNode, touches other fields) *)
  | c_ld2 s t i v : cth s t = COp i OLoad (CLd2 v) → cstep s (cset s t (COp i OLoad (CLd3 v (ds (cdr s)))))
  (* lines 2.3–2.4 (its point), goto 1 on failure *)
  | c_ld3 s t i v q : cth s t = COp i OLoad (CLd3 v q) →
      cstep s (if decide (cdr s = DP v true q)
               then cloc s t (COp i OLoad (CRet v)) (cmk s) (cpw s) (DP v false q) [XL i OLoad v]
               else cset s t (COp i OLoad CLd))
  (* the return *)
  | c_ret s t i op r : cth s t = COp i op (CRet r) → cstep s (cxs s t CIdle [XE (Return i r)])
  (* Algorithm 6.3 on the field, by any idle thread at any time *)
  | c_qstart s t : cth s t = CIdle → cstep s (cset s t (CRec Q1))
  | c_q1 s t : cth s t = CRec Q1 → cstep s (cset s t (CRec (Q2 (cdr s))))
  | c_q2 s t d : cth s t = CRec (Q2 d) → cstep s (cset s t (CRec (Q22 d (cnv s))))
  (* R2's re-read: DRAM changed, goto 1 *)
  | c_q22_fail s t d n : cth s t = CRec (Q22 d n) → cdr s ≠ d → cstep s (cset s t (CRec Q1))
  (* unchanged; line 3 outside the window *)
  | c_q22_go s t d n : cth s t = CRec (Q22 d n) → cdr s = d → ¬ n.2 < ds d →
      cstep s (cset s t (CRec (Qpwb d n)))
  (* line 3.1 in the window: the CAS of NVMM's sequence word; on failure goto 1 *)
  | c_q31_ok s t d n : cth s t = CRec (Q22 d n) → cdr s = d → n.2 < ds d → (cnv s).2 = n.2 →
      cstep s (cnvw s t (CRec (Qpwb d (n.1, S (ds d)))) ((cnv s).1, S (ds d)) (cinfl s))
  | c_q31_fail s t d n : cth s t = CRec (Q22 d n) → cdr s = d → n.2 < ds d → (cnv s).2 ≠ n.2 →
      cstep s (cset s t (CRec Q1))
  (* R1's write-back and fence *)
  | c_qpwb s t d n : cth s t = CRec (Qpwb d n) → cstep s (cpwb s t (CRec (Qfence d n)))
  | c_qfence s t d n : cth s t = CRec (Qfence d n) → cstep s (cfence s t (CRec (Q4 d n)))
  (* line 4: DRAM DWCAS to (mark(V_NV), S_NV), the mark chosen freely; goto 1 on failure *)
  | c_q4 s t d n m : cth s t = CRec (Q4 d n) →
      cstep s (if decide (cdr s = d) then cq4 s t (DP n.1 m n.2) (bool_decide (n.2 = ds d))
               else cset s t (CRec Q1))
  (* a full crash: NVMM keeps a prefix of the line's writes at least as
     long as the mark, DRAM holds any pair, the threads are gone *)
  | c_crash s keep d : cmk s ≤ keep → keep ≤ length (cws s) → 1 ≤ keep →
      cstep s (CSt [default (0, 0) (cws s !! pred keep)] 1 (λ _, 0) d false (λ _, CIdle) (cnid s)
                 (cxh s ++ (if decide (keep = length (cws s)) then ins (cinfl s) else []) ++ [XE Crash])
                 None d).

(** A run starts right after a crash that left NVMM the pair [(v0, q0)]
    (under the mark) and DRAM any pair [d]. *)
Definition cinit (v0 q0 : nat) (d : dpair) : cst :=
  CSt [(v0, q0)] 1 (λ _, 0) d false (λ _, CIdle) 0 [] None d.

(** The history: the events without the points. *)
Definition chist (s : cst) : history mop nat := erase (cxh s).

(** ** The invariant *)

Section inv.
  Context (v0 : nat).

  (** No point of [i] yet; and [i] is not the write in flight. *)
  Definition cnopt (s : cst) (i : opid) : Prop := ∀ op r, XL i op r ∉ cxh s.
  Definition cpre (s : cst) (i : opid) : Prop := cnopt s i ∧ ∀ op r, cinfl s ≠ Some (i, op, r).

  (** The register: DRAM's pointer once the field is recovered, NVMM's
      before. *)
  Definition cabsv (s : cst) : nat := if crec s then dv (cdr s) else (cnv s).1.

  (** What the writer's write-back and fence have made durable so far. *)
  Definition cwpers (s : cst) (t : nat) (w : cwp) : Prop :=
    match w with CWpwb => True | CWfence => cpw s t = length (cws s) | _ => cmk s = length (cws s) end.

  (** [finish_dram_half]'s DWCAS expects a pair with L9's pointer and sequence. *)
  Definition m2_ok (w : cwp) (d : dpair) : Prop :=
    match w with CWm2cas now => dp now = dp d | _ => True end.

  (** A durable write of the line. *)
  Definition durable (s : cst) (n : nat * nat) (lim : nat) : Prop := ∃ w, cws s !! w = Some n ∧ w < lim.

  Definition opc_ok (s : cst) (t : nat) (i : opid) (op : mop) (pc : cpc) : Prop :=
    match pc with
    | CStart => cpre s i ∧ cpw s t = 0
    | CRet r => XL i op r ∈ cxh s ∧ cpw s t = 0
    | C5 | CLd | CLd2 _ | CLd3 _ _ => cpre s i ∧ crec s = true ∧ cpw s t = 0
    | C9 p => cpre s i ∧ crec s = true ∧ cpw s t = 0 ∧ p ∈ cws s
    | CHpwb p d => cpre s i ∧ crec s = true ∧ cpw s t = 0 ∧ p ∈ cws s ∧ p.2 = S (ds d)
    | CHfence p d => cpre s i ∧ crec s = true ∧ p.2 = S (ds d) ∧ durable s p (cpw s t)
    | CHcas p d => cpre s i ∧ crec s = true ∧ cpw s t = 0 ∧ p.2 = S (ds d) ∧ durable s p (cmk s)
    | C40 p d => cpre s i ∧ crec s = true ∧ cpw s t = 0 ∧ p ∈ cws s ∧ p.1 = cas_e op ∧
        p.2 ≤ ds (cdr s) ∧ dp d = p
    | CW w d a => crec s = true ∧ (w = CWfence ∨ cpw s t = 0) ∧ a = (cas_n op, S (ds d)) ∧ m2_ok w d ∧
        ((cinfl s = Some (i, op, cas_e op) ∧ dp (cdr s) = dp d ∧ cnopt s i ∧ cnv s = a ∧ cwpers s t w) ∨
         (XL i op (cas_e op) ∈ cxh s ∧ ds d < ds (cdr s)))
    end.

  Definition qpc_ok (s : cst) (t : nat) (pc : qpc) : Prop :=
    match pc with
    | Q1 => cpw s t = 0
    | Q2 d => cpw s t = 0 ∧ ds d ≤ ds (cdr s) ∧ (crec s = false → d = cgd s)
    | Q22 d n => cpw s t = 0 ∧ ds d ≤ ds (cdr s) ∧ n ∈ cws s ∧ (d = cgd s ∨ ds d ≤ n.2) ∧
        (crec s = false → d = cgd s ∧ (ds d ≤ n.2 → n = cnv s))
    | Qpwb d n => cpw s t = 0 ∧ n ∈ cws s ∧ ds d ≤ n.2 ∧ (crec s = false → d = cgd s ∧ n = cnv s)
    | Qfence d n => ds d ≤ n.2 ∧ (crec s = false → d = cgd s ∧ n = cnv s) ∧ durable s n (cpw s t)
    | Q4 d n => cpw s t = 0 ∧ ds d ≤ n.2 ∧ (crec s = false → d = cgd s ∧ n = cnv s) ∧ durable s n (cmk s)
    end.

  Definition tok (s : cst) (t : nat) (x : ctst) : Prop :=
    match x with
    | CIdle => cpw s t = 0
    | COp i op pc => XE (Invoke i t op) ∈ cxh s ∧ opc_ok s t i op pc
    | CRec pc => qpc_ok s t pc
    end.

  (** The write in flight: a CAS from DRAM's pointer, invoked, without a
      point yet, whose pair is NVMM's last. *)
  Definition infl_ok (s : cst) : Prop :=
    ∃ i e n t, cinfl s = Some (i, OCas e n, e) ∧ e = dv (cdr s) ∧ cnv s = (n, S (ds (cdr s))) ∧
      XE (Invoke i t (OCas e n)) ∈ cxh s ∧ cnopt s i.

  Record cinv (s : cst) : Prop := {
    c_ne : cws s ≠ [];
    c_sorted : sorted (cws s);
    c_mk : 1 ≤ cmk s ∧ cmk s ≤ length (cws s);
    c_pw : ∀ t, cpw s t ≤ length (cws s);
    c_pre : crec s = false → cinfl s = None ∧ cdr s = cgd s ∧ (∀ p, p ∈ cws s → p.1 = (cnv s).1) ∧
              (length (cws s) = 1 ∨ ds (cgd s) < (cnv s).2);
    c_gd : crec s = true → ds (cgd s) ≤ ds (cdr s);
    c_dram : crec s = true → ∃ j, cws s !! j = Some (dp (cdr s)) ∧ j < cmk s ∧
               ((S j = length (cws s) ∧ cinfl s = None) ∨ (S (S j) = length (cws s) ∧ infl_ok s));
    c_ids : ∀ t t' i, ctid (cth s t) = Some i → ctid (cth s t') = Some i → t = t';
    c_inv : ∀ i t op, XE (Invoke i t op) ∈ cxh s → i < cnid s;
    c_ok : prefix_ok point_ok (cxh s);
    c_run : rfin v0 (effects (points (cxh s))) = Some (cabsv s);
    c_th : ∀ t, tok s t (cth s t);
  }.

  Lemma cinv_init q0 d : cinv (cinit v0 q0 d).
  Proof.
    split; simpl; try done; try lia.
    - intros a b pa pb Ha Hb Hab. destruct a as [|[|]], b as [|[|]]; simpl in *; simplify_eq; lia.
    - intros _. split_and!; try done; [| by left]. by intros p ->%elem_of_list_singleton.
    - by intros ??? ?%elem_of_nil.
    - apply prefix_ok_nil.
  Qed.

  (** *** Facts of an invariant state *)

  Lemma cnv_in s : cinv s → cnv s ∈ cws s.
  Proof. intros Hc. eapply elem_of_list_lookup_2, last_lookup, (c_ne _ Hc). Qed.

  Lemma same_seq s p q : cinv s → p ∈ cws s → q ∈ cws s → p.2 = q.2 → p = q.
  Proof.
    intros Hc (a & Ha)%elem_of_list_lookup (b & Hb)%elem_of_list_lookup E.
    pose proof (sorted_same _ _ _ _ _ (c_sorted _ Hc) Ha Hb E) as ->. congruence.
  Qed.

  Lemma le_cnv s p : cinv s → p ∈ cws s → p.2 ≤ (cnv s).2.
  Proof. intros Hc (a & Ha)%elem_of_list_lookup. exact (sorted_last _ _ _ (c_sorted _ Hc) (c_ne _ Hc) Ha). Qed.

  Lemma dram_in s : cinv s → crec s = true → dp (cdr s) ∈ cws s.
  Proof. intros Hc Hr. destruct (c_dram _ Hc Hr) as (j & Hj & _). by eapply elem_of_list_lookup_2. Qed.

  Lemma dram_le s : cinv s → crec s = true → ds (cdr s) ≤ (cnv s).2.
  Proof. intros Hc Hr. apply (le_cnv s (dp (cdr s)) Hc (dram_in s Hc Hr)). Qed.

  (** A durable write at DRAM's sequence or the next one: DRAM's own pair,
      or the write in flight. *)
  Lemma durable_next s n : cinv s → crec s = true → n ∈ cws s → ds (cdr s) ≤ n.2 →
    n = dp (cdr s) ∨ (n = cnv s ∧ n.2 = S (ds (cdr s)) ∧ infl_ok s).
  Proof.
    intros Hc Hr (w & Hw)%elem_of_list_lookup Hle.
    destruct (c_dram _ Hc Hr) as (j & Hj & Hjm & Hor).
    destruct (decide (n.2 = ds (cdr s))) as [E|Hne].
    { left. by apply (same_seq s); [| by eapply elem_of_list_lookup_2 | by eapply elem_of_list_lookup_2 |]. }
    right. pose proof (sorted_lt _ _ _ _ _ (c_sorted _ Hc) Hj Hw ltac:(simpl; lia)).
    pose proof (lookup_lt_Some _ _ _ Hw).
    destruct Hor as [[Hl _]|[Hl Hi]]; [lia |].
    assert (w = S j) as -> by lia.
    assert (En : n = cnv s).
    { unfold cnv. pose proof (last_lookup _ (c_ne _ Hc)) as Hlast.
      replace (pred (length (cws s))) with (S j) in Hlast by lia. congruence. }
    split_and!; [done | | done].
    destruct Hi as (? & ? & ? & ? & _ & _ & Hn & _). by rewrite En, Hn.
  Qed.
  (** *** How a thread's facts survive steps of others *)

  Lemma tok_frame s s' t x :
    tok s t x →
    cpw s' t = cpw s t → crec s' = crec s →
    (∀ w p, cws s !! w = Some p → cws s' !! w = Some p) → cmk s ≤ cmk s' → ds (cdr s) ≤ ds (cdr s') →
    (∀ y, y ∈ cxh s → y ∈ cxh s') →
    (∀ i, ctid x = Some i → cnopt s i → cnopt s' i) →
    (∀ i op r, ctid x = Some i → cinfl s' = Some (i, op, r) → cinfl s = Some (i, op, r)) →
    (∀ i op r, ctid x = Some i → cinfl s = Some (i, op, r) →
       cinfl s' = Some (i, op, r) ∧ dp (cdr s') = dp (cdr s) ∧ cws s' = cws s ∧ cmk s' ≤ length (cws s')) →
    cgd s' = cgd s → (∀ pc, x = CRec pc → crec s = false → cws s' = cws s ∧ cdr s' = cdr s) →
    tok s' t x.
  Proof.
    intros Ht Hpw Hrec Hws Hmk Hdr Hxh Hnopt Hin1 Hin2 Hgd Hpre0.
    assert (Hin : ∀ p, p ∈ cws s → p ∈ cws s').
    { intros p (w & Hw)%elem_of_list_lookup. apply elem_of_list_lookup. eauto. }
    assert (Hdur : ∀ p lim lim', lim ≤ lim' → durable s p lim → durable s' p lim').
    { intros p lim lim' Hl (w & Hw & Hlt). exists w. split; [eauto | lia]. }
    destruct x as [|i op pc|pc]; simpl in *; [congruence | |].
    - specialize (Hnopt i eq_refl). specialize (Hin1 i). specialize (Hin2 i).
      assert (Hpre' : cpre s i → cpre s' i).
      { intros [H1 H2]. split; [auto |]. intros op' r' E. apply (H2 op' r'). by apply (Hin1 op' r'). }
      destruct Ht as [Hinv Hpc]. split; [auto |].
      destruct pc; simpl in *; rewrite ?Hrec, ?Hpw.
      + destruct Hpc; split; auto.
      + destruct Hpc; split; auto.
      + destruct Hpc as (? & ? & ?); split_and!; auto.
      + destruct Hpc as (? & ? & ? & ?); split_and!; auto.
      + destruct Hpc as (? & ? & ? & ? & ?); split_and!; auto.
      + destruct Hpc as (? & ? & ? & ?); split_and!; eauto; try (eapply Hdur; [| done]; lia).
      + destruct Hpc as (? & ? & ? & ? & ?); split_and!; eauto.
      + destruct Hpc as (? & ? & ? & ? & ? & ? & ?); split_and!; eauto; lia.
      + destruct Hpc as (? & ? & ? & ? & [(Hi & Hd & Hn & Hnv' & Hw)|(Hx & Hlt)]).
        * destruct (Hin2 _ _ eq_refl Hi) as (Hi' & Hd' & Hws' & Hmk').
          split_and!; eauto. left. unfold cnv, cwpers in *. rewrite Hi', Hd', Hws'.
          split_and!; eauto. rewrite Hws' in Hmk'. rewrite Hpw. destruct w; try done; lia.
        * split_and!; eauto. right. split; [auto | lia].
      + destruct Hpc as (? & ? & ?); split_and!; auto.
      + destruct Hpc as (? & ? & ?); split_and!; auto.
      + destruct Hpc as (? & ? & ?); split_and!; auto.
    - assert (Hnv : crec s = false → cnv s' = cnv s).
      { intros Hr. unfold cnv. by rewrite (proj1 (Hpre0 pc eq_refl Hr)). }
      destruct pc; simpl in *; rewrite ?Hrec, ?Hpw, ?Hgd.
      + done.
      + destruct Ht as (? & ? & Hg). split_and!; auto. lia.
      + destruct Ht as (? & ? & ? & ? & Hg). split_and!; auto; [lia |].
        intros Hr. rewrite (Hnv Hr). auto.
      + destruct Ht as (? & ? & ? & Hg). split_and!; auto.
        intros Hr. rewrite (Hnv Hr). auto.
      + destruct Ht as (? & Hg & ?). split_and!; auto; [| eapply Hdur; [| done]; lia].
        intros Hr. rewrite (Hnv Hr). auto.
      + destruct Ht as (? & ? & Hg & ?). split_and!; auto; [| eapply Hdur; [| done]; lia].
        intros Hr. rewrite (Hnv Hr). auto.
  Qed.
  (** *** Steps that write no NVMM word and leave DRAM's pointer and
      sequence alone *)

  Lemma tid_eq s t u i : cinv s → ctid (cth s t) = Some i → ctid (cth s u) = Some i → u = t.
  Proof. intros Hc H1 H2. symmetry. by apply (c_ids _ Hc t u i). Qed.

  Lemma local_step s t x mk pw d l :
    cinv s →
    cmk s ≤ mk → mk ≤ length (cws s) →
    (∀ u, u ≠ t → pw u = cpw s u) → pw t ≤ length (cws s) →
    dp d = dp (cdr s) → (crec s = false → d = cdr s) →
    (ctid x = None ∨ ctid x = ctid (cth s t)) →
    (∀ i op r, XL i op r ∈ l → ctid (cth s t) = Some i ∧ cpre s i) →
    (∀ i u op, XE (Invoke i u op) ∉ l) →
    prefix_ok point_ok (cxh s ++ l) →
    rfin (cabsv s) (effects (points l)) = Some (cabsv s) →
    tok (cloc s t x mk pw d l) t x →
    cinv (cloc s t x mk pw d l).
  Proof.
    intros Hc Hmk Hmk' Hpw Hpwt Hd Hdpre Hx Hl Hli Hok Hrl Ht.
    assert (Hdv : dv d = dv (cdr s)) by (by injection Hd).
    assert (Hds : ds d = ds (cdr s)) by (by injection Hd).
    pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    split; simpl; try done; try lia.
    - intros u. destruct (decide (u = t)) as [->|]; [done | rewrite Hpw; auto].
    - intros Hr. assert (Hnv : cnv (cloc s t x mk pw d l) = cnv s) by done. rewrite Hnv.
      destruct (Hpre Hr) as (? & Hd' & ? & ?). split_and!; try done. by rewrite (Hdpre Hr).
    - intros Hr. rewrite Hds. auto.
    - intros Hr. destruct (Hdram Hr) as (j & Hj & Hjm & Hor). exists j. rewrite Hd. split_and!; [done | lia |].
      destruct Hor as [?|(Hl2 & i & e & n & tw & Hi & He & Hn & Hiv & Hno)]; [by left | right].
      split; [done |]. exists i, e, n, tw. unfold cnv in *. simpl. rewrite Hdv, Hds.
      split_and!; try done.
      + apply elem_of_app. by left.
      + intros op r [Hin|Hin]%elem_of_app; [by apply (Hno op r) |].
        destruct (Hl _ _ _ Hin) as [_ [_ Hn']]. by apply (Hn' (OCas e n) e).
    - intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done.
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids t t2 i).
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids t1 t i).
      + apply Hids.
    - intros i u op [Hin|Hin]%elem_of_app; [by eapply Hinv | by apply Hli in Hin].
    - rewrite eff_app, rfin_app, Hrun. simpl. unfold cabsv in *. simpl. rewrite Hdv. done.
    - intros u. destruct (decide (u = t)) as [->|Hne']; [by rewrite upd_same |].
      rewrite upd_other by done. apply (tok_frame s); simpl; try done; try lia.
      + by rewrite Hpw.
      + intros y Hy. apply elem_of_app. by left.
      + intros i Hi Hn op r [Hin|Hin]%elem_of_app; [by apply (Hn op r) |].
        destruct (Hl _ _ _ Hin) as [Ht' _]. apply Hne'. by apply (tid_eq s t u i).
      + intros ? _ Hr. split; [done | by apply Hdpre].
  Qed.

  Lemma invoke_step s t op : cinv s → cth s t = CIdle → cinv (cinvoke s t op).
  Proof.
    intros Hc Ht. pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    assert (Hlt : ∀ u i, ctid (cth s u) = Some i → i < cnid s).
    { intros u i Hu. pose proof (Hth u) as Hu'. destruct (cth s u) as [|i' op' pc|]; try done.
      injection Hu as ->. destruct Hu' as [Hi _]. by eapply Hinv. }
    assert (Hinfl : ∀ op' r, cinfl s ≠ Some (cnid s, op', r)).
    { intros op' r E. destruct (crec s) eqn:Hr.
      - destruct (Hdram eq_refl) as (j & _ & _ & [(_ & E')|(_ & i & e & n & tw & Hi & _ & _ & Hiv & _)]);
          rewrite E in *; [done |]. injection Hi as Heq _ _. rewrite <- Heq in Hiv. apply Hinv in Hiv. lia.
      - destruct (Hpre eq_refl) as [E' _]. congruence. }
    split; simpl; try done.
    - intros Hr. destruct (Hdram Hr) as (j & Hj & Hjm & Hor). exists j. split_and!; [done | done |].
      destruct Hor as [?|(Hl2 & i & e & n & tw & Hi & He & Hn & Hiv & Hno)]; [by left | right].
      split; [done |]. exists i, e, n, tw. split_and!; try done.
      + apply elem_of_app. by left.
      + intros op' r [Hin|Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hno op' r) | done].
    - intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; simpl; try done.
      + intros [= <-] H2. pose proof (Hlt t2 _ H2). lia.
      + intros H1 [= <-]. pose proof (Hlt t1 _ H1). lia.
      + apply Hids.
    - intros i u op' [Hin|Hin%elem_of_list_singleton]%elem_of_app; [pose proof (Hinv _ _ _ Hin); lia |].
      injection Hin as -> _ _. lia.
    - apply prefix_ok_snoc. by split.
    - rewrite eff_app, rfin_app, Hrun. done.
    - intros u. destruct (decide (u = t)) as [->|Hne'].
      + rewrite upd_same. simpl. split; [apply elem_of_app; right; by left |]. split_and!; [split |].
        * intros op' r [Hin|Hin%elem_of_list_singleton]%elem_of_app; [| done].
          destruct (xl_invoked _ _ _ _ Hok0 Hin) as (u & op'' & Hi). apply elem_of_erase in Hi.
          apply Hinv in Hi. lia.
        * apply Hinfl.
        * pose proof (Hth t) as H. rewrite Ht in H. done.
      + rewrite upd_other by done. apply (tok_frame s); simpl; try done; try lia.
        * intros y Hy. apply elem_of_app. by left.
        * intros i _ Hn op' r [Hin|Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hn op' r) | done].
  Qed.
  (** *** DRAM gets the write in flight *)

  Lemma infl_of s : cinv s → crec s = true → ds (cdr s) < (cnv s).2 →
    ∃ j, cws s !! j = Some (dp (cdr s)) ∧ S (S j) = length (cws s) ∧ infl_ok s.
  Proof.
    intros Hc Hr Hlt. destruct (c_dram _ Hc Hr) as (j & Hj & _ & [(Hl & _)|(Hl & Hi)]); [| by exists j].
    exfalso. pose proof (last_lookup _ (c_ne _ Hc)) as Hlast. replace (pred (length (cws s))) with j in Hlast by lia.
    fold (cnv s) in Hlast. rewrite Hj in Hlast. injection Hlast as E. rewrite <- E in Hlt. simpl in Hlt. lia.
  Qed.

  Lemma copy_step s t x d :
    cinv s → crec s = true → dp d = cnv s → ds (cdr s) < (cnv s).2 → durable s (cnv s) (cmk s) →
    (ctid x = None ∨ ctid x = ctid (cth s t)) →
    tok (ccopy s t x d) t x →
    cinv (ccopy s t x d).
  Proof.
    intros Hc Hr Hd Hlt Hdur Hx Ht.
    destruct (infl_of s Hc Hr Hlt) as (j & Hj & Hl & iw & e & n & tw & Hi & He & Hn & Hiv & Hno).
    assert (Hdn : dv d = n ∧ ds d = S (ds (cdr s))) by (rewrite Hn in Hd; by injection Hd).
    destruct Hdn as [Hdv Hds].
    assert (Hlast : cws s !! S j = Some (cnv s)).
    { pose proof (last_lookup _ (c_ne _ Hc)) as Hlast. by replace (pred (length (cws s))) with (S j) in Hlast by lia. }
    destruct Hdur as (w & Hw & Hwm).
    assert (w = S j) as -> by (apply (sorted_same _ _ _ _ _ (c_sorted _ Hc) Hw Hlast); done).
    pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    unfold ccopy. rewrite Hi. simpl.
    split; simpl; try done; try lia; try (intros; congruence).
    - intros _. pose proof (Hgd Hr). lia.
    - intros _. exists (S j). rewrite Hd. split_and!; [done | done | left; split; [lia | done]].
    - intros t1 t2 i. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done.
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids t t2 i).
      + destruct Hx as [-> | ->]; [done |]. intros ??. by apply (Hids t1 t i).
      + apply Hids.
    - intros i u op [Hin|Hin%elem_of_list_singleton]%elem_of_app; [by eapply Hinv | done].
    - apply prefix_ok_snoc. split; [done |]. split; [exists tw; by apply elem_of_erase | done].
    - rewrite eff_app, rfin_app, Hrun. unfold cabsv. rewrite Hr. simpl.
      rewrite decide_True by done. simpl. rewrite decide_True by done. by rewrite Hdv.
    - intros u. destruct (decide (u = t)) as [->|Hne'].
      + rewrite upd_same. unfold ccopy in Ht. rewrite Hi in Ht. exact Ht.
      + rewrite upd_other by done. pose proof (Hth u) as Hu.
        destruct (decide (ctid (cth s u) = Some iw)) as [Hiu|Hiu].
        * destruct (cth s u) as [|i op pc|pc]; try done. injection Hiu as ->.
          destruct Hu as [Hinvu Hpc]. split; [simpl; apply elem_of_app; by left |].
          destruct pc; simpl in Hpc |- *;
            try (destruct Hpc as [[_ Hne2] _]; by destruct (Hne2 (OCas e n) e));
            try (destruct Hpc as [Hx' _]; by destruct (Hno _ _ Hx')).
          destruct Hpc as (? & ? & ? & ? & [(Hi' & Hd' & _)|(Hx' & _)]); [| by destruct (Hno _ _ Hx')].
          rewrite Hi in Hi'. injection Hi' as <- <-. simpl.
          split_and!; try done. right. split; [apply elem_of_app; right; by left |].
          injection Hd' as _ <-. lia.
        * apply (tok_frame s); simpl; try done; try lia; try (intros; congruence).
          -- intros y Hy. apply elem_of_app. by left.
          -- intros i Hiu' Hno' op r [Hin|Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hno' op r) |].
             injection Hin as -> _ _. congruence.
  Qed.
  (** *** NVMM writes *)

  Lemma cnv_snoc s a : cnv (cnvw s 0 CIdle a None) = a.
  Proof. unfold cnv. simpl. by rewrite last_snoc. Qed.

  Lemma cnvw_nv s t x a o : cnv (cnvw s t x a o) = a.
  Proof. unfold cnv. simpl. by rewrite last_snoc. Qed.

  (** L40 succeeds: the CAS's write is in flight. *)
  Lemma l40_step s t i e n p d :
    cinv s → cth s t = COp i (OCas e n) (C40 p d) → cnv s = p →
    cinv (cnvw s t (COp i (OCas e n) (CW CWpwb d (n, S p.2))) (n, S p.2) (Some (i, OCas e n, e))).
  Proof.
    intros Hc Ht Hnv. pose proof (c_th _ Hc t) as Htt. rewrite Ht in Htt.
    destruct Htt as (Hinv0 & [Hno Hni] & Hr & Hp0 & Hp & Hpe & Hpd & Hdp). simpl in Hpe.
    pose proof (dram_le s Hc Hr). rewrite Hnv in *.
    assert (Hds : ds (cdr s) = p.2) by lia.
    assert (Edr : dp (cdr s) = p) by (apply (same_seq s); [done | by apply dram_in | done | done]).
    destruct (c_dram _ Hc Hr) as (j & Hj & Hjm & [(Hl & Hi0)|(Hl & Hi)]).
    2:{ exfalso. destruct Hi as (? & ? & ? & ? & _ & _ & Hn' & _). rewrite Hnv in Hn'. rewrite Hn' in Hds.
        simpl in Hds. lia. }
    pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    split; simpl; try done; try (intros; congruence).
    - by destruct (cws s).
    - apply sorted_snoc; try done. fold (cnv s). rewrite Hnv. simpl. lia.
    - rewrite app_length. simpl. lia.
    - intros u. rewrite app_length. simpl. pose proof (Hpw0 u). lia.
    - intros _. exists j. split_and!; [by apply lookup_snoc_l | done |]. right.
      split; [rewrite app_length; simpl; lia |].
      exists i, e, n, t. rewrite cnvw_nv. split_and!; try done.
      + simpl. rewrite <- Hpe. by rewrite <- Edr.
      + simpl. by rewrite Hds.
    - intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done.
      + intros ??. apply (Hids t t2 i'); [by rewrite Ht | done].
      + intros ??. apply (Hids t1 t i'); [done | by rewrite Ht].
      + apply Hids.
    - unfold cabsv in *. simpl. rewrite Hr in Hrun |- *. done.
    - intros u. destruct (decide (u = t)) as [->|Hne'].
      + rewrite upd_same. simpl. split; [done |]. rewrite cnvw_nv. split_and!; try done;
          [by right | by rewrite <- Hdp | left; split_and!; try done; by rewrite Edr].
      + rewrite upd_other by done. apply (tok_frame s); simpl; try done; try lia; try (intros; congruence).
        * intros. by apply lookup_snoc_l.
        * intros i' op r Hi' E. injection E as -> _ _. exfalso. apply Hne'.
          apply (tid_eq s t u i'); [done | by rewrite Ht | done].
  Qed.

  (** Line 3.1's CAS of NVMM's sequence word succeeds: before the first
      return only. *)
  Lemma q31_step s t d n :
    cinv s → cth s t = CRec (Q22 d n) → cdr s = d → n.2 < ds d → (cnv s).2 = n.2 →
    cinv (cnvw s t (CRec (Qpwb d (n.1, S (ds d)))) ((cnv s).1, S (ds d)) (cinfl s)).
  Proof.
    intros Hc Ht Hd Hlt Hnv. pose proof (c_th _ Hc t) as Htt. rewrite Ht in Htt.
    destruct Htt as (Hp0 & Hdd & Hn & Hor & Hpt).
    destruct (crec s) eqn:Hr.
    { exfalso. pose proof (dram_le s Hc Hr). rewrite <- Hd in Hlt. lia. }
    destruct (Hpt eq_refl) as [Hdg _].
    destruct (c_pre _ Hc Hr) as (Hi0 & Hdr & Hval & Hlen).
    assert (En : n = cnv s) by (apply (same_seq s); [done | done | by apply cnv_in | done]).
    pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    split; simpl; try done; try (intros; congruence).
    - by destruct (cws s).
    - apply sorted_snoc; try done. fold (cnv s). simpl. lia.
    - rewrite app_length. simpl. lia.
    - intros u. rewrite app_length. simpl. pose proof (Hpw0 u). lia.
    - intros _. rewrite cnvw_nv. simpl. split_and!; try done.
      + intros p' [Hp'|Hp'%elem_of_list_singleton]%elem_of_app; [by apply Hval | by subst p'].
      + right. subst d. rewrite <- Hdg, Hdr. lia.
    - intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done; by apply Hids.
    - unfold cabsv in *. simpl. rewrite Hr in Hrun |- *. by rewrite cnvw_nv.
    - intros u. destruct (decide (u = t)) as [->|Hne'].
      + rewrite upd_same. simpl. rewrite cnvw_nv. split_and!; try done.
        * apply elem_of_app. right. rewrite En. by left.
        * simpl. lia.
        * intros _. split; [done |]. by rewrite En.
      + rewrite upd_other by done. pose proof (Hth u) as Hu.
        destruct (cth s u) as [|i op pc|pc] eqn:Eu.
        * done.
        * apply (tok_frame s); simpl; rewrite ?Eu; try done; try lia; try (intros; congruence).
          -- intros. by apply lookup_snoc_l.
        * simpl in Hu |- *.
          assert (Hin' : ∀ p, p ∈ cws s → p ∈ cws s ++ [((cnv s).1, S (ds d))]) by (intros; apply elem_of_app; by left).
          assert (Hdur : ∀ p lim, durable s p lim → durable (cnvw s t (CRec (Qpwb d (n.1, S (ds d)))) ((cnv s).1, S (ds d)) (cinfl s)) p lim).
          { intros p lim (w & Hw & Hwl). exists w. split; [by apply lookup_snoc_l | done]. }
          rewrite Hdg in Hlt.
          destruct pc; simpl in Hu |- *.
          -- done.
          -- done.
          -- destruct Hu as (? & ? & ? & ? & Hg'). split_and!; eauto.
             intros _. destruct (Hg' Hr) as [Ed0 Hn']. split; [done |].
             intros Hle. specialize (Hn' Hle). exfalso. rewrite Hn', Ed0 in Hle. lia.
          -- destruct Hu as (? & ? & ? & Hg'). exfalso.
             destruct (Hg' Hr) as [Ed0 Hn']. rewrite Hn', Ed0 in *. lia.
          -- destruct Hu as (? & Hg' & _). exfalso.
             destruct (Hg' Hr) as [Ed0 Hn']. rewrite Hn', Ed0 in *. lia.
          -- destruct Hu as (? & ? & Hg' & _). exfalso.
             destruct (Hg' Hr) as [Ed0 Hn']. rewrite Hn', Ed0 in *. lia.
  Qed.

  (** *** The first return of a recover_field_ptr call *)

  (** The threads' facts before it hold after it. *)
  Lemma tok_recflip s s' u x :
    tok s u x → crec s = false → crec s' = true → cpw s' u = cpw s u →
    cws s' = cws s → cmk s ≤ cmk s' → cxh s' = cxh s → cinfl s' = cinfl s → cgd s' = cgd s →
    ds (cgd s) ≤ ds (cdr s') → tok s' u x.
  Proof.
    intros Ht Hr Hr' Hpw Hws Hmk Hxh Hi Hgd Hle.
    destruct x as [|i op pc|pc]; simpl in *; rewrite ?Hpw; [done | |].
    - destruct Ht as [Hinv Hpc]. rewrite Hxh. split; [done |].
      destruct pc; simpl in *; unfold cpre, cnopt in *; rewrite ?Hxh, ?Hi, ?Hpw; try (exfalso; intuition congruence).
      + done.
      + done.
    - assert (Hdur : ∀ p lim lim', lim ≤ lim' → durable s p lim → durable s' p lim').
      { intros p lim lim' Hl (w & Hw & Hlt). exists w. rewrite Hws. split; [done | lia]. }
      destruct pc; simpl in *; rewrite ?Hpw, ?Hr', ?Hws, ?Hgd.
      + done.
      + destruct Ht as (? & ? & Hg). rewrite (Hg Hr). split_and!; done.
      + destruct Ht as (? & ? & ? & ? & Hg). destruct (Hg Hr) as [-> _]. split_and!; done.
      + destruct Ht as (? & ? & ? & Hg). split_and!; done.
      + destruct Ht as (? & Hg & Hd). split_and!; [done | done | eapply Hdur; [| exact Hd]; lia].
      + destruct Ht as (? & ? & Hg & Hd). split_and!; [done | done | done | eapply Hdur; [| exact Hd]; lia].
  Qed.

  (** Line 4's DWCAS on DRAM's garbage: the field is recovered, DRAM holds
      NVMM's pair (durable by R1). *)
  Lemma q4_first s t d n m b :
    cinv s → crec s = false → cth s t = CRec (Q4 d n) → cdr s = d → cinv (cq4 s t (DP n.1 m n.2) b).
  Proof.
    intros Hc Hr Ht Hd. pose proof (c_th _ Hc t) as Htt. rewrite Ht in Htt.
    destruct Htt as (Hp0 & Hle & Hpt & w & Hw & Hwm). destruct (Hpt Hr) as [Hdg Hnv].
    destruct (c_pre _ Hc Hr) as (Hi0 & Hdr & Hval & Hlen).
    pose proof (last_lookup _ (c_ne _ Hc)) as Hl. fold (cnv s) in Hl. rewrite <- Hnv in Hl.
    assert (w = pred (length (cws s))) as -> by (eapply (sorted_same _ _ _ _ _ (c_sorted _ Hc) Hw Hl); done).
    pose proof (lookup_lt_Some _ _ _ Hw).
    assert (Hx : (cxh s ++ if b then [] else ins (cinfl s)) = cxh s) by (rewrite Hi0; destruct b; apply app_nil_r).
    assert (Hin : (if b then cinfl s else None) = None) by (rewrite Hi0; by destruct b).
    pose proof Hc as [Hne Hs [Hm1 Hm2] Hpw0 Hpre Hgd Hdram Hids Hinv Hok0 Hrun Hth].
    unfold cq4. rewrite Hx, Hin.
    split; simpl; try done; try (intros; congruence).
    - intros _. exists (pred (length (cws s))). split_and!; [by destruct n | lia | left; split; [lia | done]].
    - intros t1 t2 i'. destruct (decide (t1 = t)) as [->|]; destruct (decide (t2 = t)) as [->|];
        rewrite ?upd_same, ?upd_other by done; try done; by apply Hids.
    - unfold cabsv in *. rewrite Hr in Hrun. simpl. by rewrite Hnv.
    - intros u. destruct (decide (u = t)) as [->|Hne']; [by rewrite upd_same |].
      rewrite upd_other by done. apply (tok_recflip s); simpl; try done. by rewrite <- Hdg.
  Qed.
  (** *** A full crash *)

  Lemma crash_step s keep d :
    cinv s → cmk s ≤ keep → keep ≤ length (cws s) → 1 ≤ keep →
    cinv (CSt [default (0, 0) (cws s !! pred keep)] 1 (λ _, 0) d false (λ _, CIdle) (cnid s)
             (cxh s ++ (if decide (keep = length (cws s)) then ins (cinfl s) else []) ++ [XE Crash]) None d).
  Proof.
    intros Hc H1 H2 H3. pose proof (c_mk _ Hc) as Hm.
    set (E := if decide (keep = length (cws s)) then ins (cinfl s) else []).
    assert (Hpts : prefix_ok point_ok (cxh s ++ E) ∧ (∀ i u op, XE (Invoke i u op) ∉ E) ∧
                   rfin v0 (effects (points (cxh s ++ E))) = Some (default (0, 0) (cws s !! pred keep)).1).
    { unfold E. destruct (crec s) eqn:Hr.
      - destruct (c_dram _ Hc Hr) as (j & Hj & Hjm & [(Hlen & Hi0)|(Hlen & i & e & n & tw & Hi & He & Hn & Hiv & Hno)]).
        + rewrite Hi0. assert (pred keep = j) as -> by lia. rewrite Hj. simpl.
          rewrite decide_True by lia. simpl. rewrite app_nil_r. split_and!; [apply Hc | by intros ??? ?%elem_of_nil |].
          rewrite (c_run _ Hc). unfold cabsv. by rewrite Hr.
        + rewrite Hi. case_decide as Hk.
          * simpl. split_and!.
            -- apply prefix_ok_snoc. split; [apply Hc |]. split; [exists tw; by apply elem_of_erase | done].
            -- by intros ??? ?%elem_of_list_singleton.
            -- rewrite eff_app, rfin_app, (c_run _ Hc). unfold cabsv. rewrite Hr. simpl.
               rewrite decide_True by done. subst keep.
               rewrite (last_lookup _ (c_ne _ Hc)). fold (cnv s). rewrite Hn. simpl.
               by rewrite decide_True.
          * assert (pred keep = j) as -> by lia. rewrite Hj. simpl. rewrite app_nil_r.
            split_and!; [apply Hc | by intros ??? ?%elem_of_nil |].
            rewrite (c_run _ Hc). unfold cabsv. by rewrite Hr.
      - destruct (c_pre _ Hc Hr) as (Hi0 & _ & Hval & _). rewrite Hi0.
        assert (Hnil : (if decide (keep = length (cws s)) then ins None else []) = ([] : list (xevent mop nat)))
          by (by case_decide).
        rewrite Hnil, app_nil_r.
        split_and!; [apply Hc | by intros ??? ?%elem_of_nil |].
        rewrite (c_run _ Hc). unfold cabsv. rewrite Hr.
        destruct (lookup_lt_is_Some_2 (cws s) (pred keep)) as [p Hp]; [lia |]. rewrite Hp. simpl.
        rewrite (Hval p); [done | by eapply elem_of_list_lookup_2]. }
    fold E. destruct Hpts as (Hok & HE & Hrun').
    split; simpl; try done; try (intros; congruence); try lia; try (intros; lia).
    - intros a b pa pb Ha Hb Hab. destruct a as [|[|]], b as [|[|]]; simpl in *; simplify_eq; lia.
    - intros _. split_and!; try done; [| by left]. by intros p ->%elem_of_list_singleton.
    - intros i u op Hin. rewrite app_assoc in Hin. apply elem_of_app in Hin as [Hin|Hin].
      + apply elem_of_app in Hin as [Hin|Hin]; [by eapply (c_inv _ Hc) | by apply HE in Hin].
      + by apply elem_of_list_singleton in Hin.
    - rewrite app_assoc. apply prefix_ok_snoc. by split.
    - rewrite app_assoc, eff_app, rfin_app, Hrun'. done.
  Qed.
  (** *** Every step keeps the invariant *)

  Lemma cpre_loc s t x mk pw d l i : cpre s i → (∀ op r, XL i op r ∉ l) → cpre (cloc s t x mk pw d l) i.
  Proof. intros [H1 H2] Hl. split; [| done]. intros op r [?|?]%elem_of_app; [by eapply H1 | by eapply Hl]. Qed.
  Lemma cpre_loc0 s t x mk pw d i : cpre s i → cpre (cloc s t x mk pw d []) i.
  Proof. intros H. apply cpre_loc; [done | by intros ?? ?%elem_of_nil]. Qed.
  Lemma in_loc (s : cst) l y : y ∈ cxh s → y ∈ cxh s ++ l.
  Proof. intros H. apply elem_of_app. by left. Qed.
  Lemma in_loc_r (s : cst) y : y ∈ cxh s ++ [y].
  Proof. apply elem_of_app. right. by left. Qed.
  Lemma cnopt_loc0 s t x mk pw d i : cnopt s i → cnopt (cloc s t x mk pw d []) i.
  Proof. intros H op r. simpl. rewrite app_nil_r. apply H. Qed.

  Lemma cq4_same s t d : crec s = true → cq4 s t d true = cloc s t CIdle (cmk s) (cpw s) d [].
  Proof. intros Hr. unfold cq4, cloc. by rewrite Hr. Qed.
  Lemma cq4_copy s t d : crec s = true → cq4 s t d false = ccopy s t CIdle d.
  Proof. intros Hr. unfold cq4, ccopy. by rewrite Hr. Qed.

  Ltac thr Hc t H := let Ht := fresh "Ht" in pose proof (c_th _ Hc t) as Ht; rewrite H in Ht; simpl in Ht.
  Ltac loc Hc t H :=
    unfold cset, cxs, cpwb, cfence;
    apply local_step;
    [ exact Hc
    | simpl; lia
    | pose proof (c_mk _ Hc); pose proof (c_pw _ Hc t); lia
    | intros ??; by rewrite ?upd_other
    | rewrite ?upd_same; pose proof (c_pw _ Hc t); lia
    | try reflexivity
    | try (intros; reflexivity)
    | rewrite H; simpl; first [by left | by right]
    | first [by intros ??? ?%elem_of_nil | intros ??? Hin%elem_of_list_singleton; discriminate | idtac]
    | first [by intros ??? ?%elem_of_nil | intros ??? Hin%elem_of_list_singleton; discriminate]
    | try (rewrite app_nil_r; apply (c_ok _ Hc))
    | try reflexivity
    | simpl ].
  Ltac pt_ok Hc t Hinv Hpre :=
    apply prefix_ok_snoc; split; [apply (c_ok _ Hc) | split; [exists t; by apply elem_of_erase | apply Hpre]].

  Lemma cinv_step s s' : cinv s → cstep s s' → cinv s'.
  Proof.
    intros Hc Hs. pose proof (c_mk _ Hc) as Hm.
    destruct Hs as [s t e n H|s t H|s t i e n H Hr|s t i H Hr|s t i e n H|s t i e n p H Hp|s t i e n p H Hp Hp'
                   |s t i e n p H Hp Hpe|s t i e n p H Hp Hpe|s t i e n p d H|s t i e n p d H|s t i e n p d H
                   |s t i e n p d H Hnv|s t i e n p d H Hnv|s t i e n d a H|s t i e n d a H|s t i e n d a H
                   |s t i e n d a H|s t i e n now d a H|s t i H|s t i v H|s t i v q H|s t i op r H
                   |s t H|s t H|s t d H|s t d n H Hd|s t d n H Hd Hlt|s t d n H Hd Hlt Hnv|s t d n H Hd Hlt Hnv
                   |s t d n H|s t d n H|s t d n m H|s keep d H1 H2 H3].
    - by apply invoke_step.
    - by apply invoke_step.
    - (* tracking done: a CAS's first access *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hp0). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - thr Hc t H. destruct Ht as (Hinv & Hpre & Hp0). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - (* L5 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done | by apply cnv_in].
    - (* L9: help *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp1). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done..].
    - (* L27 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp1). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done..].
    - (* L30–L33 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp1).
      assert (Ep : p = dp (cdr s)) by (apply (same_seq s); [done | done | by apply dram_in | done]).
      loc Hc t H.
      + intros ??? [= -> -> ->]%elem_of_list_singleton. split; [by rewrite H | done].
      + pt_ok Hc t Hinv Hpre.
      + simpl. unfold cabsv. rewrite Hr. rewrite Ep. simpl. rewrite decide_True by done.
        rewrite decide_False by (rewrite Ep in Hpe; done). done.
      + split; [by apply in_loc | split; [apply in_loc_r | done]].
    - (* on to L37 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp1).
      assert (Ep : p = dp (cdr s)) by (apply (same_seq s); [done | done | by apply dram_in | done]).
      loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done | done | done | lia | by rewrite Ep].
    - (* L19 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp1 & Hp2). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done |].
      apply elem_of_list_lookup in Hp1 as [w Hw]. exists w. rewrite upd_same. split; [done | by eapply lookup_lt_Some].
    - (* L20 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp2 & w & Hw & Hwl). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | by rewrite upd_same | done |].
      exists w. split; [done | simpl; lia].
    - (* L24 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & Hp2 & Hdur).
      destruct (decide (cdr s = d)) as [<-|Hne].
      + destruct Hdur as (w & Hw & Hwl).
        destruct (durable_next s p Hc Hr ltac:(by eapply elem_of_list_lookup_2) ltac:(lia))
          as [->|(Ep & _ & _)]; [simpl in Hp2; lia |].
        apply copy_step; try done.
        * rewrite <- Ep. by destruct p.
        * rewrite <- Ep. lia.
        * exists w. by rewrite <- Ep.
        * rewrite H. by right.
        * simpl. split; [apply elem_of_app; by left |]. split_and!; try done.
          split; [| done]. intros op r [Hin|Hin]%elem_of_app; [by apply (proj1 Hpre op r) |].
          destruct (cinfl s) as [[[j op'] r']|] eqn:Ei; [| by apply elem_of_nil in Hin].
          apply elem_of_list_singleton in Hin. injection Hin as -> _ _. by apply (proj2 Hpre op' r').
      + loc Hc t H. split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - (* L40 succeeds *)
      by apply (l40_step s t i e n p d).
    - (* L40 fails: retry (M1) *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0 & _). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - (* L41 *)
      thr Hc t H. destruct Ht as (Hinv & Hr & Hp0 & Ha & Hm2 & Hdisj). loc Hc t H.
      split; [by apply in_loc |]. split_and!; try done; [by left |].
      destruct Hdisj as [(? & ? & ? & ? & _)|(? & ?)]; [left | right]; split_and!; try done.
      + by apply cnopt_loc0.
      + simpl. by rewrite upd_same.
      + by apply in_loc.
    - (* L42 *)
      thr Hc t H. destruct Ht as (Hinv & Hr & Hp0 & Ha & Hm2 & Hdisj). loc Hc t H.
      split; [by apply in_loc |]. split_and!; try done; [right; by rewrite upd_same |].
      destruct Hdisj as [(? & ? & ? & ? & Hw)|(? & ?)]; [left | right]; split_and!; try done.
      + by apply cnopt_loc0.
      + simpl in *. pose proof (c_pw _ Hc t). lia.
      + by apply in_loc.
    - (* L44 *)
      thr Hc t H. destruct Ht as (Hinv & Hr & Hp0 & Ha & Hm2 & Hdisj).
      destruct (decide (cdr s = d)) as [<-|Hne].
      + destruct Hdisj as [(Hi & _ & Hno & Hnv & Hw)|(_ & Hlt)]; [| lia]. simpl in Hw.
        destruct Hp0 as [?|Hp0]; [done |].
        apply copy_step; try done.
        * by rewrite Hnv, Ha.
        * rewrite Hnv, Ha. simpl. lia.
        * exists (pred (length (cws s))). split; [apply last_lookup, (c_ne _ Hc) | pose proof (c_ne _ Hc); destruct (cws s); simpl in *; lia].
        * rewrite H. by right.
        * simpl. split; [apply elem_of_app; by left |]. split; [| done].
          rewrite Hi. apply elem_of_app. right. by left.
      + destruct Hp0 as [?|Hp0]; [done |].
        loc Hc t H. split; [by apply in_loc |]. split_and!; try done; [by right |].
        destruct Hdisj as [(? & ? & ? & ? & Hw)|(? & ?)]; [left | right]; split_and!; try done.
        * by apply cnopt_loc0.
        * by apply in_loc.
    - (* finish_dram_half: L497–L500 *)
      thr Hc t H. destruct Ht as (Hinv & Hr & Hp0 & Ha & Hm2 & Hdisj). destruct Hp0 as [?|Hp0]; [done |].
      destruct (decide (ds (cdr s) = ds d ∧ dv (cdr s) = dv d)) as [[E1 E2]|Hne].
      + loc Hc t H. split; [by apply in_loc |]. split_and!; try done; [by right | unfold dp; by rewrite E1, E2 |].
        destruct Hdisj as [(? & ? & ? & ? & Hw)|(? & ?)]; [left | right]; split_and!; try done.
        * by apply cnopt_loc0.
        * by apply in_loc.
      + loc Hc t H. split; [by apply in_loc |]. split; [| done].
        destruct Hdisj as [(_ & Hd & _)|(? & _)]; [| by apply in_loc].
        exfalso. apply Hne. unfold dp in Hd. by injection Hd as -> ->.
    - (* finish_dram_half: L501–L507 *)
      thr Hc t H. destruct Ht as (Hinv & Hr & Hp0 & Ha & Hm2 & Hdisj). simpl in Hm2.
      destruct (decide (cdr s = now)) as [<-|Hne].
      + destruct Hdisj as [(Hi & _ & Hno & Hnv & Hw)|(_ & Hlt)]; [| injection Hm2 as _ E; lia]. simpl in Hw.
        destruct Hp0 as [?|Hp0]; [done |].
        apply copy_step; try done.
        * by rewrite Hnv, Ha.
        * rewrite Hnv, Ha. simpl. injection Hm2 as _ ->. lia.
        * exists (pred (length (cws s))). split; [apply last_lookup, (c_ne _ Hc) | pose proof (c_ne _ Hc); destruct (cws s); simpl in *; lia].
        * rewrite H. by right.
        * simpl. split; [apply elem_of_app; by left |]. split; [| done].
          rewrite Hi. apply elem_of_app. right. by left.
      + destruct Hp0 as [?|Hp0]; [done |].
        loc Hc t H. split; [by apply in_loc |]. split_and!; try done; [by right |].
        destruct Hdisj as [(? & ? & ? & ? & Hw)|(? & ?)]; [left | right]; split_and!; try done.
        * by apply cnopt_loc0.
        * by apply in_loc.
    - (* Algorithm 6.4, line 1 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0).
      destruct (dm (cdr s)) eqn:Em.
      + loc Hc t H. split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
      + loc Hc t H.
        * intros ??? [= -> -> ->]%elem_of_list_singleton. split; [by rewrite H | done].
        * pt_ok Hc t Hinv Hpre.
        * simpl. unfold cabsv. rewrite Hr. by rewrite decide_True.
        * split; [by apply in_loc | split; [apply in_loc_r | done]].
    - (* line 2.1 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0). loc Hc t H.
      split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - (* lines 2.3–2.4 *)
      thr Hc t H. destruct Ht as (Hinv & Hpre & Hr & Hp0).
      destruct (decide (cdr s = DP v true q)) as [Ed|Hne].
      + loc Hc t H.
        * by rewrite Ed.
        * intros Hr'. congruence.
        * intros ??? [= -> -> ->]%elem_of_list_singleton. split; [by rewrite H | done].
        * pt_ok Hc t Hinv Hpre.
        * simpl. unfold cabsv. rewrite Hr, Ed. simpl. by rewrite decide_True.
        * split; [by apply in_loc | split; [apply in_loc_r | done]].
      + loc Hc t H. split; [by apply in_loc |]. split_and!; [by apply cpre_loc0 | done | done].
    - (* the return *)
      thr Hc t H. destruct Ht as (Hinv & Hx & Hp0). loc Hc t H; [| done].
      apply prefix_ok_snoc. split; [apply (c_ok _ Hc) | by exists op].
    - (* Algorithm 6.3: a call starts *)
      thr Hc t H. loc Hc t H. done.
    - (* line 1 *)
      thr Hc t H. loc Hc t H. split_and!; [done | done |]. intros Hr. by destruct (c_pre _ Hc Hr) as (_ & -> & _).
    - (* line 2 *)
      thr Hc t H. destruct Ht as (Hp0 & Hd & Hdg). loc Hc t H. split_and!; try done.
      + by apply cnv_in.
      + destruct (crec s) eqn:Hr; [right; pose proof (dram_le s Hc Hr); simpl; lia | left; by apply Hdg].
      + intros Hr. split; [by apply Hdg | done].
    - (* R2's re-read: goto 1 *)
      thr Hc t H. destruct Ht as (Hp0 & _). loc Hc t H. done.
    - (* line 3, outside the window *)
      thr Hc t H. destruct Ht as (Hp0 & Hdd & Hn & Hor & Hpt). loc Hc t H. split_and!; try done; [lia |].
      intros Hr. destruct (Hpt Hr) as [-> Hnv]. split; [done |]. apply Hnv. lia.
    - (* line 3.1 succeeds *)
      by apply q31_step.
    - (* line 3.1 fails: goto 1 *)
      thr Hc t H. destruct Ht as (Hp0 & _). loc Hc t H. done.
    - (* R1's write-back *)
      thr Hc t H. destruct Ht as (Hp0 & Hn & Hle & Hpt). loc Hc t H. split_and!; try done.
      apply elem_of_list_lookup in Hn as [w Hw]. exists w. rewrite upd_same. split; [done | by eapply lookup_lt_Some].
    - (* R1's fence *)
      thr Hc t H. destruct Ht as (Hle & Hpt & w & Hw & Hwl). loc Hc t H. split_and!; try done.
      + by rewrite upd_same.
      + exists w. split; [done | simpl; lia].
    - (* line 4 *)
      thr Hc t H. destruct Ht as (Hp0 & Hle & Hpt & w & Hw & Hwl).
      destruct (decide (cdr s = d)) as [<-|Hne].
      + destruct (crec s) eqn:Hr; [| by apply (q4_first s t (cdr s) n m)].
        destruct (durable_next s n Hc Hr ltac:(by eapply elem_of_list_lookup_2) Hle) as [En|(En & Hn2 & _)].
        * rewrite bool_decide_true by (rewrite En; done). rewrite cq4_same by done.
          apply local_step; try done; try lia; try (rewrite En; by destruct (cdr s)).
          -- intros; congruence.
          -- by left.
          -- by intros ??? ?%elem_of_nil.
          -- by intros ??? ?%elem_of_nil.
          -- rewrite app_nil_r. apply (c_ok _ Hc).
        * rewrite bool_decide_false by lia. rewrite cq4_copy by done.
          apply copy_step; try done; try lia.
          -- simpl. rewrite <- En. by destruct n.
          -- rewrite <- En. lia.
          -- exists w. by rewrite <- En.
          -- by left.
      + loc Hc t H. done.
    - (* a crash *)
      by apply crash_step.
  Qed.
End inv.

(** ** Every run's history is durably linearizable *)

Section theorems.
  Context (v0 q0 : nat) (d0 : dpair).

  Lemma creach_cinv s : rtc cstep (cinit v0 q0 d0) s → cinv v0 s.
  Proof. apply rtc_preserved; [apply cinv_init | intros ?? Hc Hs; exact (cinv_step v0 _ _ Hc Hs)]. Qed.

  (** The ghost points of every reachable state are a witness for its
      history and the register starting at the crash image's pointer. *)
  Theorem m2_fix_px_lin_points s : rtc cstep (cinit v0 q0 d0) s → lin_points (reg v0) (chist s) (cxh s).
  Proof.
    intros Hr. pose proof (creach_cinv s Hr) as Hc. split; [done | apply (c_ok _ _ Hc) |].
    by eapply rfin_runs, (c_run _ _ Hc).
  Qed.

  (** Mirror's pointer field with recovery marks, M1 and M2 fixed, with
      full crashes and Algorithm 6.3's recovery, on line-granular
      persistence: every run's history is durably linearizable. *)
  Theorem m2_fix_px_durably_linearizable s :
    rtc cstep (cinit v0 q0 d0) s → durably_linearizable (reg v0) (chist s).
  Proof.
    intros Hr. pose proof (creach_cinv s Hr) as Hc.
    apply durably_linearizable_erase; [apply (c_ok _ _ Hc) | by eapply rfin_runs, (c_run _ _ Hc)].
  Qed.
End theorems.

(** ** The histories are well formed *)

Lemma ctid_upd (f : nat → ctst) t0 x t : ctid x = ctid (f t0) → ctid (upd f t0 x t) = ctid (f t).
Proof. intros Hx. unfold upd. destruct (Nat.eqb t t0) eqn:E; [| done]. apply Nat.eqb_eq in E. by subst. Qed.

(** How a step changes the history and the threads' operations. *)
Lemma cstep_cases s s' :
  cstep s s' →
  (chist s' = chist s ∧ cnid s' = cnid s ∧ ∀ t, ctid (cth s' t) = ctid (cth s t)) ∨
  (∃ t op, cth s t = CIdle ∧ chist s' = chist s ++ [Invoke (cnid s) t op] ∧ cnid s' = S (cnid s) ∧
     ∀ t', ctid (cth s' t') = if Nat.eqb t' t then Some (cnid s) else ctid (cth s t')) ∨
  (∃ t i op r, cth s t = COp i op (CRet r) ∧ chist s' = chist s ++ [Return i r] ∧ cnid s' = cnid s ∧
     ∀ t', ctid (cth s' t') = if Nat.eqb t' t then None else ctid (cth s t')) ∨
  (chist s' = chist s ++ [Crash] ∧ cnid s' = cnid s ∧ ∀ t, cth s' t = CIdle).
Proof.
  destruct 1; repeat case_decide;
    try match goal with |- context [if dm ?x then _ else _] => destruct (dm x) end;
    try match goal with |- context [cq4 _ _ _ (bool_decide ?P)] => destruct (bool_decide P) end.
  all: try (left; split_and!;
    [ unfold chist, cset, cxs, cpwb, cfence, cloc, ccopy, cnvw, cq4; simpl; rewrite ?erase_app, ?erase_ins; simpl;
      rewrite ?app_nil_r; reflexivity
    | reflexivity
    | intros t'; unfold cset, cxs, cpwb, cfence, cloc, ccopy, cnvw, cq4; simpl;
      first [reflexivity | apply ctid_upd; by rewrite H] ]).
  - right; left. exists t, (OCas e n). split_and!; [done | | done |].
    + unfold chist. simpl. by rewrite erase_app.
    + intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; left. exists t, OLoad. split_and!; [done | | done |].
    + unfold chist. simpl. by rewrite erase_app.
    + intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; right; left. exists t, i, op, r. split_and!; [done | | done |].
    + unfold chist. simpl. by rewrite erase_app.
    + intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; right; right. split_and!; [| done | done].
    unfold chist. simpl. rewrite !erase_app, ?erase_ins. done.
  - right; right; right. split_and!; [| done | done].
    unfold chist. simpl. rewrite !erase_app, ?erase_ins. done.
Qed.

Section wf.
  Context (v0 : nat).

  Record winv (s : cst) : Prop := {
    w_wf : wf (chist s);
    w_inv : ∀ j, invoked (chist s) j → j < cnid s;
    w_pend : ∀ t j, pending_on (chist s) t j → ctid (cth s t) = Some j;
    w_act : ∀ t i, ctid (cth s t) = Some i → pending_on (chist s) t i ∧ ∀ v, Return i v ∉ chist s;
    w_norec : ∀ i v, Recover i v ∉ chist s;
  }.

  Lemma winv_counted s : winv s ↔ counted_ops (chist s) (cnid s) (λ t, ctid (cth s t)).
  Proof. split; intros []; by split. Qed.

  Lemma winv_init q0 d : winv (cinit v0 q0 d).
  Proof. apply winv_counted, counted_ops_nil. done. Qed.

  (** [History.v]'s argument, for the four kinds of step of [cstep_cases]. *)
  Lemma winv_step s s' : cinv v0 s → winv s → cstep s s' → winv s'.
  Proof.
    intros _ Hw%winv_counted Hst. apply winv_counted, (counted_ops_step _ _ _ _ _ _ Hw).
    destruct (cstep_cases s s' Hst) as
      [(Eh & En & Et)|[(t & op & Ht & Eh & En & Et)|[(t & i & op & r & Ht & Eh & En & Et)|(Eh & En & Et)]]];
      rewrite Eh, En.
    - by apply ops_step_same.
    - apply ops_step_invoke; [by rewrite Ht | done].
    - apply (ops_step_return _ _ _ t i); [by rewrite Ht | done].
    - apply ops_step_crash. intros u. by rewrite Et.
  Qed.
End wf.

(** Every run's history is well formed (HISTORY.md's rules, [History.wf]):
    fresh ids, one pending operation per thread, a [Return] only of a
    pending operation, no [recover] (Mirror is not detectable: a cut-off
    operation stays cut off). *)
Theorem m2_fix_px_wf v0 q0 d0 s : rtc cstep (cinit v0 q0 d0) s → wf (chist s).
Proof.
  intros Hr. cut (cinv v0 s ∧ winv s); [intros [_ []]; done |].
  revert s Hr. apply rtc_preserved; [split; [apply cinv_init | apply winv_init] |].
  intros y z [Hc Hw] Hs. split; [exact (cinv_step v0 _ _ Hc Hs) | exact (winv_step v0 _ _ Hc Hw Hs)].
Qed.

(** ** The theorem is not vacuous: M2's schedule, then a crash that keeps an unflushed CAS *)

Ltac ccur R := match type of R with rtc _ _ ?x => x end.
Ltac cnorm R := match type of R with rtc ?r ?a ?x => let y := eval vm_compute in x in change (rtc r a y) in R end.
Ltac cgo R p := let R' := fresh "R" in pose proof (rtc_r _ _ _ R p) as R'; clear R; rename R' into R; cnorm R.
Ltac side := first [reflexivity | vm_compute; lia | vm_compute; congruence].

(** The history of [m2_fix_px_run]. *)
Definition px_hist : history mop nat :=
  [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1; Return 0 1; Invoke 2 0 (OCas 2 3); Crash;
   Invoke 3 1 OLoad; Return 3 3].

(** From [cinit 1 0 (DP 7 true 5)] (a crash left NVMM [(1, 0)] and DRAM
    the garbage [(mark 7, 5)]), 43 steps, 3 threads:
    - thread 2's [recover_field_ptr]: lines 1, 2, R2's re-read, line 3.1
      moving NVMM's sequence past the garbage's to [(1, 6)], R1's
      write-back and fence, line 4 copying [(mark 1, 6)];
    - M2's schedule: thread 0's CAS(1, 2) reads NVMM [(1, 6)] and DRAM
      [(mark 1, 6)], writes NVMM [(2, 7)]; thread 1's load unmarks DRAM
      (Algorithm 6.4, lines 1, 2.1, 2.3) and returns 1; thread 0's L41,
      L42, then L44 fails on the unmarked pair, [finish_dram_half] installs
      [(2, 7)] (the CAS's point), the CAS returns 1;
    - thread 0's CAS(2, 3) writes NVMM [(3, 8)] (L40), writes it back and
      fences (L41, L42); a crash keeps it (its point, at the crash: it is
      cut off and took effect) and leaves DRAM [(0, 0)];
    - thread 2's recovery (line 3 outside the window) copies [(3, 8)]
      unmarked; thread 1's load returns 3. *)
Lemma m2_fix_px_run : ∃ s, rtc cstep (cinit 1 0 (DP 7 true 5)) s ∧ chist s = px_hist ∧ XL 2 (OCas 2 3) 2 ∈ cxh s.
Proof.
  pose proof (rtc_refl cstep (cinit 1 0 (DP 7 true 5))) as R. cnorm R.
  (* recovery after the first crash, through the window *)
  let x := ccur R in cgo R (c_qstart x 2 ltac:(side)).
  let x := ccur R in cgo R (c_q1 x 2 ltac:(side)).
  let x := ccur R in cgo R (c_q2 x 2 (DP 7 true 5) ltac:(side)).
  let x := ccur R in cgo R (c_q31_ok x 2 (DP 7 true 5) (1, 0) ltac:(side) ltac:(side) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_qpwb x 2 (DP 7 true 5) (1, 6) ltac:(side)).
  let x := ccur R in cgo R (c_qfence x 2 (DP 7 true 5) (1, 6) ltac:(side)).
  let x := ccur R in cgo R (c_q4 x 2 (DP 7 true 5) (1, 6) true ltac:(side)).
  (* M2's schedule *)
  let x := ccur R in cgo R (c_inv_cas x 0 1 2 ltac:(side)).
  let x := ccur R in cgo R (c_start_cas x 0 0 1 2 ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_l5 x 0 0 1 2 ltac:(side)).
  let x := ccur R in cgo R (c_l9_go x 0 0 1 2 (1, 6) ltac:(side) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_l40_ok x 0 0 1 2 (1, 6) (DP 1 true 6) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_inv_load x 1 ltac:(side)).
  let x := ccur R in cgo R (c_start_load x 1 1 ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_ld1 x 1 1 ltac:(side)).
  let x := ccur R in cgo R (c_ld2 x 1 1 1 ltac:(side)).
  let x := ccur R in cgo R (c_ld3 x 1 1 1 6 ltac:(side)).
  let x := ccur R in cgo R (c_ret x 1 1 OLoad 1 ltac:(side)).
  let x := ccur R in cgo R (c_wpwb x 0 0 1 2 (DP 1 true 6) (2, 7) ltac:(side)).
  let x := ccur R in cgo R (c_wfence x 0 0 1 2 (DP 1 true 6) (2, 7) ltac:(side)).
  let x := ccur R in cgo R (c_l44 x 0 0 1 2 (DP 1 true 6) (2, 7) ltac:(side)).
  let x := ccur R in cgo R (c_m2 x 0 0 1 2 (DP 1 true 6) (2, 7) ltac:(side)).
  let x := ccur R in cgo R (c_m2cas x 0 0 1 2 (DP 1 false 6) (DP 1 true 6) (2, 7) ltac:(side)).
  let x := ccur R in cgo R (c_ret x 0 0 (OCas 1 2) 1 ltac:(side)).
  (* a CAS whose write a crash keeps *)
  let x := ccur R in cgo R (c_inv_cas x 0 2 3 ltac:(side)).
  let x := ccur R in cgo R (c_start_cas x 0 2 2 3 ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_l5 x 0 2 2 3 ltac:(side)).
  let x := ccur R in cgo R (c_l9_go x 0 2 2 3 (2, 7) ltac:(side) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_l40_ok x 0 2 2 3 (2, 7) (DP 2 false 7) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_wpwb x 0 2 2 3 (DP 2 false 7) (3, 8) ltac:(side)).
  let x := ccur R in cgo R (c_wfence x 0 2 2 3 (DP 2 false 7) (3, 8) ltac:(side)).
  let x := ccur R in cgo R (c_crash x 4 (DP 0 false 0) ltac:(side) ltac:(side) ltac:(side)).
  (* recovery, then a load *)
  let x := ccur R in cgo R (c_qstart x 2 ltac:(side)).
  let x := ccur R in cgo R (c_q1 x 2 ltac:(side)).
  let x := ccur R in cgo R (c_q2 x 2 (DP 0 false 0) ltac:(side)).
  let x := ccur R in cgo R (c_q22_go x 2 (DP 0 false 0) (3, 8) ltac:(side) ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_qpwb x 2 (DP 0 false 0) (3, 8) ltac:(side)).
  let x := ccur R in cgo R (c_qfence x 2 (DP 0 false 0) (3, 8) ltac:(side)).
  let x := ccur R in cgo R (c_q4 x 2 (DP 0 false 0) (3, 8) false ltac:(side)).
  let x := ccur R in cgo R (c_inv_load x 1 ltac:(side)).
  let x := ccur R in cgo R (c_start_load x 1 3 ltac:(side) ltac:(side)).
  let x := ccur R in cgo R (c_ld1 x 1 3 ltac:(side)).
  let x := ccur R in cgo R (c_ret x 1 3 OLoad 3 ltac:(side)).
  eexists. split; [exact R |]. split; vm_compute; [reflexivity |]. apply elem_of_list_In. simpl. tauto.
Qed.

(** A reachable state whose history has a crash, a CAS and a load
    interleaved as in M2's refuted run, and a CAS a crash cut off that took
    effect (its point is in the witness); the history is durably
    linearizable. *)
Theorem m2_fix_px_not_vacuous :
  ∃ s, rtc cstep (cinit 1 0 (DP 7 true 5)) s ∧ chist s = px_hist ∧ cut_off px_hist 2 ∧
    XL 2 (OCas 2 3) 2 ∈ cxh s ∧ durably_linearizable (reg 1) (chist s).
Proof.
  destruct m2_fix_px_run as (s & Hr & Hh & Hin). exists s. split_and!; try done.
  - exists [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1; Return 0 1], [], [Invoke 3 1 OLoad; Return 3 3], 0, (OCas 2 3).
    split; [done |]. by intros v ?%elem_of_nil.
  - by apply (m2_fix_px_durably_linearizable 1 0 (DP 7 true 5)).
Qed.
