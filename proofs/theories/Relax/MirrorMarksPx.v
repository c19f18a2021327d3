(** * Mirror's L44 with recovery marks: finding M2 refuted, its fix proved

    Seed 002 (the RELAX thesis).  Algorithm 4.1, Mirror's
    [compare_exchange_strong] (seed file lines 184–233; line [Ln] of the
    listing is file line [183 + n]): L5–L7 (188–190) read NVMM's pair, L9–L11
    (192–194) DRAM's, L18–L24 help a write whose NVMM half is done, L27
    retries on other sequences, L30–L33 fail on another value, L40 (223) is
    the NVMM DWCAS from [before = (rep_p_val, rep_p_seq)] to
    [after = (newVal, rep_p_seq + 1)], L41–L42 (224–225) write back and
    fence, L44 (227) [DWCAS(this, before, after)] is the DRAM half, L49
    (232) returns [res], true.  Algorithm 6.3 ([recoverField] for a
    [MarkablePatomicPointer], file lines 381–388): line 1 reads DRAM's pair
    [(V_D, S_D)], line 2 NVMM's [(V_NV, S_NV)], line 3 is the sequence
    window (3.1–3.2), line 4 DWCASes DRAM from [(V_D, S_D)] to
    [(mark(V_NV), S_NV)]; unlike Algorithm 6.2 it has no line "return if
    the pairs are equal" (text, file line 373), so a late, redundant call
    re-marks a DRAM pair equal to NVMM's.  Algorithm 6.4 ([load], file
    lines 400–408): line 1 reads DRAM's value; if marked, line 2.1 reads
    DRAM's sequence [S], 2.2 recovers the referent, 2.3 DWCASes DRAM from
    [(V, S)] to [(unmark(V), S)] (goto 1 on failure), 2.4/3 return the
    unmarked pointer: the sequence does not change.

    Finding M2 ([specs/relax/README.md], "### M2"; found by shuttle on the
    implementation, skip list and BST after a crash): a CAS reads DRAM
    [(mark(p), s)] at L9, its L40 succeeds, and before its L44 a load
    unmarks DRAM to [(p, s)] (or a late [recoverField] re-marks [(p, s)]);
    L44 expects its L9 pair, fails, and the CAS returns true while DRAM
    keeps [p] at sequence [s]: every load returns [p] until a later write
    helps.

    The model: ONE pointer field, crash-free, right after the crash's
    recovery of the field ([kinit v0 q0 m0]: NVMM [(v0, q0)], DRAM the same
    pair, marked or not), any number of threads; unbounded sequence
    numbers; each step atomic (SC), 16-byte reads and DWCAS atomic.  DRAM's
    pair [dpair] is a pointer, its recovery mark (bit 2, [RECOVERY_MARK]) and
    a sequence; NVMM's is a pointer and a sequence (NVMM never holds a
    mark).  Three ghost fields no guard reads: the history [khist]
    ([Core/History.v] events), the pointer each NVMM sequence was written
    with [kvals], and the newest returned write [klw] (value, sequence).
    Rust, [impl/perdure-relax/src/patomic.rs]:
    - a CAS ([k_inv_cas] … [k_ret]): [PAtomicPtr::compare_exchange]
      (L265–L275) runs [Space::mirror_cas] (L401–L485): [k_l5] L5–L7
      ([read_nvmm], L412), [k_l9_*] L9–L11 ([Dram::read_pair], L414) and the
      local decisions L18 (L424), L27 (L432), L30–L33 (L437–L438: return
      NVMM's value; the pointer CAS's re-load on failure, L273, is a load
      and not modelled), [k_l24] the help's DRAM DWCAS (L427), [k_l40_ok],
      [k_l40_fail] L40 (L443) with M1's retry (L479–L482; no run below has
      a failed L40, so they are also runs of the published L46–L47), [k_l44]
      L44 (L459), [k_fin], [k_fin_cas] [Space::finish_dram_half]
      (L495–L509: L497 reads DRAM's pair; L498 returns unless it has L9's
      sequence and L9's pointer up to the mark; L501 DWCASes it to
      [after]; L505 returns on success, else loops to L497);
    - a load ([k_inv_load], [k_ld1], [k_ld2], [k_ld3], [k_ret]):
      [PAtomicPtr::load] (L258) runs [Space::load_ptr] (L732–L759), under
      the markable variants Algorithm 6.4: line 1 (L738, DRAM's value), line
      3 (L739–L740), line 2.1 (L742, DRAM's sequence), lines 2.3–2.4
      (L753–L755, the unmarking DWCAS, goto 1 on failure); line 2.2 (L751,
      [recover_node] of the referent) touches other fields and is left out;
    - a recovery of the field ([k_rstart], [k_r1], [k_r2], [k_r22],
      [k_r4]): [Space::recover_field_ptr] (L609–L624) and
      [Space::recover_attempt] (L523–L583): line 1 (L524), line 2 (L527),
      R2's re-read of DRAM (L534–L539, here optional and repeatable, so the
      published algorithm without it is covered too), line 4's DWCAS to
      [(mark(V_NV), S_NV)] with the mark chosen freely ([Space::marked],
      L629–L635: null and, under [ZMarkable], recovered referents are not
      marked).  Any idle thread may start one at any time: in the code it
      is a [recover_node] of the field's node, run by a load of a marked
      pointer to that node (Algorithm 6.4 line 2.2) or by [recover_fields];
      a nested call is modelled as another thread (the steps do not depend
      on the thread).  Lines 3–3.2 (the window, L544–L570) are left out:
      with unbounded sequences DRAM's sequence never exceeds NVMM's in a
      recovered field (the invariant [i_seq]; a recovering thread's [rc_ok]
      has [ds d ≤ sn], so the window test is false).
    L44's three readings ([mode]): [Seed], the printed L44, a DRAM DWCAS
    from NVMM's [before] (unmarked), once; [Once], the code's L44 from the
    pair read at L9 (the one deliberate difference the module docs give,
    patomic.rs L76–L83), once: the mutant [Line44Once] (L461), M2 as
    shuttle found it; [Fix], the code: L44, then [finish_dram_half].
    Persistence plays no role in M2 (it needs no crash after the field's
    recovery): L19–L20's and L41–L42's write-backs and fences, R1's
    (L577–L580), and crashes are left out.

    Proved:
    - [m2_once_not_durably_linearizable]: a reachable state of [Once] (14
      steps, 2 threads, no crash, each step by [vm_compute]) whose history
      [m2_hist] is not durably linearizable ([Core/DurableLin.v]) for
      [MirrorPxLin.v]'s register [reg 1] (CAS returns the value it found):
      thread 0's CAS(1, 2) reads NVMM [(1, 0)] and DRAM [(mark 1, 0)], writes
      NVMM [(2, 1)]; thread 1's load unmarks DRAM to [(1, 0)] and returns 1;
      thread 0's L44 fails and its CAS returns 1 (success); thread 1's next
      load returns 1.  The schedule of [m2_cas_success_then_stale_load] in
      [impl/perdure-relax/tests/mutants_relax.rs].
    - [m2_seed_not_durably_linearizable]: the printed L44 ([Seed]), one
      thread, 11 steps: the CAS's L44 expects the unmarked [(1, 0)] and
      fails on DRAM's [(mark 1, 0)] without any other thread (so does the
      first write after any recovery that marked the pointer, as the module
      docs, L80–L82, say), it returns 1, and the same thread's load
      then unmarks DRAM and returns 1.
    - [cas_then_load_not_durably_linearizable]: the argument of both: a
      CAS(a, b) returning a, then a load invoked after it returning a, with
      no other write in the history, is never durably linearizable.
    - [m2_once_stale_load], [m2_seed_stale_load] ([stale_load md]): a
      reachable step of [Once] / [Seed] fixes a load's result (Algorithm
      6.4's line 1 on an unmarked pointer, or a successful line 2.3) to a
      value other than the newest returned write's while NVMM is still at
      that write's sequence (no L40 since).
    - The fixed model ([Fix]): [kinv_reach] (the invariant [kinv] holds in
      every reachable state: Mirror's first invariant
      [DRAM.seq ≤ NVMM.seq ≤ DRAM.seq + 1], each replica's pointer is the one
      its sequence was written with, and while NVMM is at the newest
      returned write's sequence DRAM is at it too); from it
      [m2_fix_dram_shows_last_write] (then DRAM holds that write's pointer
      at its sequence, marked or not), [m2_fix_load_returns_last_write]
      (every step fixing a load's result then fixes that pointer) and
      [m2_fix_no_stale_load] ([¬ stale_load Fix]).
    - The fixed model over histories: [m2_fix_no_missed_cas] (no reachable
      state of [Fix] has a history with the pattern of
      [cas_then_load_not_durably_linearizable]: a CAS(a, b) returned [a],
      it is the history's only write, and a load invoked after that return
      returned [a]); hence [m2_hist_unreachable_in_fix] and
      [seed_hist_unreachable_in_fix] (neither refuted history happens with
      [finish_dram_half]).  From [kinv_reach], [kstep_shape] (every step is
      an invocation, a return, a step inside an operation, which moves NVMM
      only at L40, or a recovery step), [hinv_reach] (the history against
      the threads: a running operation is invoked and not returned, ids are
      fresh and unique) and [cinv_reach] (while [i] is the only write: past
      its L40 NVMM holds its write; once it returned, NVMM and the newest
      returned write are its write; every load invoked after that return
      and fixed returned [b]).

    Abstracts: one field, no crash after the field's recovery, SC atomic
    steps, unbounded sequence numbers (no window, no MSB sequence space);
    [recover_node]'s effect on other fields and the tracking bitset;
    stores and [fetch_add] (CAS loops: their successful CAS is a CAS here);
    the failure path's re-load; persistence (above); [PATIENCE] and error
    paths; liveness.  Here the fixed model has the state-level theorems
    above and the absence of the refuted pattern (histories whose only
    write is one CAS); [MirrorMarksPxLin.v] proves every history of [Fix]
    durably linearizable. *)
From stdpp Require Import base list.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin MirrorPxBugs.

(** ** The model *)

(** DRAM's pair of a pointer field: the pointer [dv], its recovery mark
    [dm] (bit 2, [RECOVERY_MARK]), the sequence [ds]. *)
Record dpair : Type := DP { dv : nat; dm : bool; ds : nat }.

Global Instance dpair_eq_dec : EqDecision dpair.
Proof.
  intros [a b c] [a' b' c'].
  destruct (decide (a = a' ∧ b = b' ∧ c = c')) as [(-> & -> & ->)|Hne]; [by left |].
  right. intros [= -> -> ->]. tauto.
Defined.

(** Which L44 a CAS runs.
    - [Seed]: Algorithm 4.1's L44 as printed (seed file line 227):
      [DWCAS(this, before, after)] with [before] NVMM's pair read at L5–L7
      (unmarked), once; a failure is ignored, L49 returns true.
    - [Once]: the DRAM DWCAS from the pair read at L9–L11 (the code's
      reading, patomic.rs L459), once; a failure is ignored: the mutant
      [Line44Once] (L461), i.e. finding M2 as shuttle found it.
    - [Fix]: the code: the same DWCAS, then on failure
      [Space::finish_dram_half] (L461–L462, L495–L509). *)
Inductive mode : Type := Seed | Once | Fix.

(** A thread's program counter inside a CAS or a load; [n] (the CAS's new
    value) comes from the operation. *)
Inductive kpc : Type :=
  | K5                               (* L5–L7 next: read NVMM's pair *)
  | K9 (pv ps : nat)                 (* L9–L11 next: read DRAM's pair *)
  | K24 (pv ps : nat) (d : dpair)    (* L24 next: help, DRAM DWCAS d -> (pv, ps) *)
  | K40 (pv ps : nat) (d : dpair)    (* L37–L40 next: NVMM DWCAS (pv, ps) -> (n, ps + 1) *)
  | K44 (pv ps : nat) (d : dpair)    (* L44 next: DRAM DWCAS to (n, ps + 1) *)
  | KF (d : dpair) (ps : nat)        (* finish_dram_half: L497, read DRAM next *)
  | KFc (d now : dpair) (ps : nat)   (* finish_dram_half: L501, DWCAS now -> (n, ps + 1) next *)
  | KRet (r : nat) (w : option (nat * nat)) (* return r next; w: the write (value, seq) of a success *)
  | KLd                              (* Algorithm 6.4 line 1 next: read DRAM's value *)
  | KLd2 (v : nat)                   (* line 2.1 next: read DRAM's sequence (v marked) *)
  | KLd3 (v q : nat).                (* line 2.3 next: DRAM DWCAS (mark v, q) -> (v, q) *)

(** A thread's program counter inside a [recover_field_ptr] call on the
    field (Algorithm 6.3). *)
Inductive rpc : Type :=
  | R1                               (* line 1 next: read DRAM's pair *)
  | R2 (d : dpair)                   (* line 2 next: read NVMM's pair *)
  | R4 (d : dpair) (vn sn : nat).    (* line 4 next (or R2's re-read): DRAM DWCAS d -> (mark vn, sn) *)

Global Instance kpc_eq_dec : EqDecision kpc.
Proof. solve_decision. Defined.

Inductive ktst : Type := KIdle | KOp (i : nat) (op : mop) (pc : kpc) | KRec (pc : rpc).

Record kst : Type := KSt {
  knv : nat * nat;                   (* NVMM's pair: value, sequence *)
  kdr : dpair;                       (* DRAM's pair *)
  kth : nat → ktst;                  (* the threads *)
  knid : nat;                        (* the next operation id *)
  khist : history mop nat;           (* ghost: the history *)
  kvals : nat → nat;                 (* ghost: the value NVMM's write of each sequence wrote *)
  klw : nat * nat;                   (* ghost: the newest returned write, (value, sequence) *)
}.

Definition kset (s : kst) (t : nat) (x : ktst) : kst :=
  KSt (knv s) (kdr s) (upd (kth s) t x) (knid s) (khist s) (kvals s) (klw s).
Definition ksetd (s : kst) (t : nat) (x : ktst) (d : dpair) : kst :=
  KSt (knv s) d (upd (kth s) t x) (knid s) (khist s) (kvals s) (klw s).
Definition kinvoke (s : kst) (t : nat) (op : mop) (pc : kpc) : kst :=
  KSt (knv s) (kdr s) (upd (kth s) t (KOp (knid s) op pc)) (S (knid s))
      (khist s ++ [Invoke (knid s) t op]) (kvals s) (klw s).
(** L40's success: NVMM gets [(n, q)]; the ghost records [n] at [q]. *)
Definition kl40 (s : kst) (t : nat) (x : ktst) (n q : nat) : kst :=
  KSt (n, q) (kdr s) (upd (kth s) t x) (knid s) (khist s) (upd (kvals s) q n) (klw s).
(** The newest returned write. *)
Definition newlw (lw : nat * nat) (w : option (nat * nat)) : nat * nat :=
  match w with Some (v, q) => if decide (lw.2 ≤ q) then (v, q) else lw | None => lw end.
Definition kreturn (s : kst) (t i r : nat) (w : option (nat * nat)) : kst :=
  KSt (knv s) (kdr s) (upd (kth s) t KIdle) (knid s) (khist s ++ [Return i r]) (kvals s) (newlw (klw s) w).

(** L44's expected pair. *)
Definition l44_exp (md : mode) (pv ps : nat) (d : dpair) : dpair :=
  match md with Seed => DP pv false ps | _ => d end.
(** After a failed L44. *)
Definition l44_fail (md : mode) (e n ps : nat) (d : dpair) : kpc :=
  match md with Fix => KF d ps | _ => KRet e (Some (n, S ps)) end.

Inductive kstep (md : mode) : kst → kst → Prop :=
  (* an operation starts *)
  | k_inv_cas s t e n : kth s t = KIdle → kstep md s (kinvoke s t (OCas e n) K5)
  | k_inv_load s t : kth s t = KIdle → kstep md s (kinvoke s t OLoad KLd)
  (* L5–L7 *)
  | k_l5 s t i e n : kth s t = KOp i (OCas e n) K5 →
      kstep md s (kset s t (KOp i (OCas e n) (K9 (knv s).1 (knv s).2)))
  (* L9–L11, then L18 (help), L27 (retry), L30–L33 (fail), on to L37 *)
  | k_l9_help s t i e n pv ps : kth s t = KOp i (OCas e n) (K9 pv ps) → ps = S (ds (kdr s)) →
      kstep md s (kset s t (KOp i (OCas e n) (K24 pv ps (kdr s))))
  | k_l9_wait s t i e n pv ps : kth s t = KOp i (OCas e n) (K9 pv ps) → ps ≠ S (ds (kdr s)) →
      ps ≠ ds (kdr s) → kstep md s (kset s t (KOp i (OCas e n) K5))
  | k_l9_fail s t i e n pv ps : kth s t = KOp i (OCas e n) (K9 pv ps) → ps = ds (kdr s) → pv ≠ e →
      kstep md s (kset s t (KOp i (OCas e n) (KRet pv None)))
  | k_l9_go s t i e n pv ps : kth s t = KOp i (OCas e n) (K9 pv ps) → ps = ds (kdr s) → pv = e →
      kstep md s (kset s t (KOp i (OCas e n) (K40 pv ps (kdr s))))
  (* L19–L24: the help's DRAM DWCAS (write-back and fence abstracted), then retry *)
  | k_l24 s t i e n pv ps d : kth s t = KOp i (OCas e n) (K24 pv ps d) →
      kstep md s (ksetd s t (KOp i (OCas e n) K5) (if decide (kdr s = d) then DP pv false ps else kdr s))
  (* L40: NVMM DWCAS; on failure retry (M1's fix) *)
  | k_l40_ok s t i e n pv ps d : kth s t = KOp i (OCas e n) (K40 pv ps d) → knv s = (pv, ps) →
      kstep md s (kl40 s t (KOp i (OCas e n) (K44 pv ps d)) n (S ps))
  | k_l40_fail s t i e n pv ps d : kth s t = KOp i (OCas e n) (K40 pv ps d) → knv s ≠ (pv, ps) →
      kstep md s (kset s t (KOp i (OCas e n) K5))
  (* L44 (L41–L42 abstracted) *)
  | k_l44 s t i e n pv ps d : kth s t = KOp i (OCas e n) (K44 pv ps d) →
      kstep md s (if decide (kdr s = l44_exp md pv ps d)
                  then ksetd s t (KOp i (OCas e n) (KRet e (Some (n, S ps)))) (DP n false (S ps))
                  else kset s t (KOp i (OCas e n) (l44_fail md e n ps d)))
  (* finish_dram_half: L497–L500 *)
  | k_fin s t i e n d ps : kth s t = KOp i (OCas e n) (KF d ps) →
      kstep md s (kset s t (KOp i (OCas e n)
                   (if decide (ds (kdr s) = ds d ∧ dv (kdr s) = dv d) then KFc d (kdr s) ps
                    else KRet e (Some (n, S ps)))))
  (* finish_dram_half: L501–L507 *)
  | k_fin_cas s t i e n d now ps : kth s t = KOp i (OCas e n) (KFc d now ps) →
      kstep md s (if decide (kdr s = now)
                  then ksetd s t (KOp i (OCas e n) (KRet e (Some (n, S ps)))) (DP n false (S ps))
                  else kset s t (KOp i (OCas e n) (KF d ps)))
  (* Algorithm 6.4: line 1, line 3 *)
  | k_ld1 s t i : kth s t = KOp i OLoad KLd →
      kstep md s (kset s t (KOp i OLoad (if dm (kdr s) then KLd2 (dv (kdr s)) else KRet (dv (kdr s)) None)))
  (* line 2.1 (line 2.2, the referent's recoverNode, touches other fields) *)
  | k_ld2 s t i v : kth s t = KOp i OLoad (KLd2 v) →
      kstep md s (kset s t (KOp i OLoad (KLd3 v (ds (kdr s)))))
  (* lines 2.3–2.4, 3; goto 1 on failure *)
  | k_ld3 s t i v q : kth s t = KOp i OLoad (KLd3 v q) →
      kstep md s (if decide (kdr s = DP v true q) then ksetd s t (KOp i OLoad (KRet v None)) (DP v false q)
                  else kset s t (KOp i OLoad KLd))
  (* the return *)
  | k_ret s t i op r w : kth s t = KOp i op (KRet r w) → kstep md s (kreturn s t i r w)
  (* Algorithm 6.3 on this field, by any idle thread at any time *)
  | k_rstart s t : kth s t = KIdle → kstep md s (kset s t (KRec R1))
  | k_r1 s t : kth s t = KRec R1 → kstep md s (kset s t (KRec (R2 (kdr s))))
  | k_r2 s t d : kth s t = KRec (R2 d) → kstep md s (kset s t (KRec (R4 d (knv s).1 (knv s).2)))
  | k_r22 s t d vn sn : kth s t = KRec (R4 d vn sn) →
      kstep md s (kset s t (KRec (if decide (kdr s = d) then R4 d vn sn else R1)))
  | k_r4 s t d vn sn m : kth s t = KRec (R4 d vn sn) →
      kstep md s (if decide (kdr s = d) then ksetd s t KIdle (DP vn m sn) else kset s t (KRec R1)).

(** Right after the field's recovery: NVMM [(v0, q0)], DRAM the same
    pair, marked or not. *)
Definition kinit (v0 q0 : nat) (m0 : bool) : kst :=
  KSt (v0, q0) (DP v0 m0 q0) (λ _, KIdle) 0 [] (λ _, v0) (v0, q0).

Inductive kreach (md : mode) : kst → Prop :=
  | kr_init v0 q0 m0 : kreach md (kinit v0 q0 m0)
  | kr_step s s' : kreach md s → kstep md s s' → kreach md s'.

(** ** The fixed model's invariant *)

(** A pair [(v, q)] of NVMM some thread read: NVMM is at [q] or later, and
    [v] is what the write of [q] wrote. *)
Definition npast (s : kst) (v q : nat) : Prop := q ≤ (knv s).2 ∧ v = kvals s q.
(** A DRAM pair some thread read: DRAM is at its sequence or later, and its
    pointer is the one NVMM's write of that sequence wrote. *)
Definition dpast (s : kst) (d : dpair) : Prop := ds d ≤ ds (kdr s) ∧ dv d = kvals s (ds d).

Definition pc_ok (s : kst) (n : nat) (pc : kpc) : Prop :=
  match pc with
  | K5 | KLd | KLd2 _ | KLd3 _ _ => True
  | K9 pv ps => npast s pv ps
  | K24 pv ps d => npast s pv ps ∧ dpast s d ∧ ps = S (ds d)
  | K40 pv ps d => npast s pv ps ∧ dpast s d ∧ ds d = ps
  | K44 _ ps d | KF d ps => dpast s d ∧ ds d = ps ∧ npast s n (S ps)
  | KFc d now ps => dpast s d ∧ ds d = ps ∧ dpast s now ∧ ds now = ps ∧ npast s n (S ps)
  | KRet _ w => match w with None => True | Some (v, q) => q ≤ ds (kdr s) ∧ npast s v q end
  end.

Definition rc_ok (s : kst) (pc : rpc) : Prop :=
  match pc with
  | R1 => True
  | R2 d => dpast s d
  | R4 d vn sn => dpast s d ∧ npast s vn sn ∧ ds d ≤ sn
  end.

Definition t_ok (s : kst) (x : ktst) : Prop :=
  match x with
  | KIdle => True
  | KOp _ (OCas _ n) pc => pc_ok s n pc
  | KOp _ _ pc => pc_ok s 0 pc
  | KRec pc => rc_ok s pc
  end.

(** The invariant of the fixed model ([Fix]).  [i_lw_dr] is the point:
    while NVMM is still at the newest returned write's sequence, DRAM is
    at it too. *)
Record kinv (s : kst) : Prop := {
  i_seq : ds (kdr s) ≤ (knv s).2 ≤ S (ds (kdr s));
  i_nv : (knv s).1 = kvals s (knv s).2;
  i_dr : dv (kdr s) = kvals s (ds (kdr s));
  i_lw : npast s (klw s).1 (klw s).2;
  i_lw_dr : (knv s).2 = (klw s).2 → ds (kdr s) = (knv s).2;
  i_th : ∀ t, t_ok s (kth s t)
}.

(** Claims about the past survive any step that moves NVMM and DRAM forward
    and leaves the values of the sequences up to NVMM's alone. *)
Lemma t_ok_mono s s' x :
  ds (kdr s) ≤ (knv s).2 → (knv s).2 ≤ (knv s').2 → ds (kdr s) ≤ ds (kdr s') →
  (∀ q, q ≤ (knv s).2 → kvals s' q = kvals s q) → t_ok s x → t_ok s' x.
Proof.
  intros Hdn Hn Hd Hv.
  assert (Np : ∀ v q, npast s v q → npast s' v q).
  { unfold npast. intros v q [Hq ->]. split; [lia | by rewrite Hv]. }
  assert (Dp : ∀ d, dpast s d → dpast s' d).
  { unfold dpast. intros d [Hq Hq']. rewrite Hq'. split; [lia | rewrite Hv; [done | lia]]. }
  destruct x as [|i op pc|pc]; simpl; [done | |].
  - assert (∀ n, pc_ok s n pc → pc_ok s' n pc) as Hpc.
    { intros n. destruct pc as [| | | | | | |r [[v q]|]| | |]; simpl; naive_solver lia. }
    destruct op; auto.
  - destruct pc; simpl; naive_solver.
Qed.

Lemma kinv_init v0 q0 m0 : kinv (kinit v0 q0 m0).
Proof. split; unfold npast; simpl; try done; lia. Qed.

Lemma kinv_kset s t x : kinv s → t_ok s x → kinv (kset s t x).
Proof.
  intros [H1 H2 H3 H4 H5 Hi] Hx. split; try done. intros t'. simpl.
  destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same | rewrite upd_other by done; apply Hi].
  exact Hx.
Qed.

Lemma kinv_step s s' : kinv s → kstep Fix s s' → kinv s'.
Proof.
  intros I Hs. pose proof I as [H1 H2 H3 H4 H5 Hi].
  destruct Hs as [s t e n Ht|s t Ht|s t i e n Ht|s t i e n pv ps Ht Hp|s t i e n pv ps Ht Hp Hp'
                 |s t i e n pv ps Ht Hp Hpv|s t i e n pv ps Ht Hp Hpv|s t i e n pv ps d Ht
                 |s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht
                 |s t i e n d ps Ht|s t i e n d now ps Ht|s t i Ht|s t i v Ht|s t i v q Ht
                 |s t i op r w Ht|s t Ht|s t Ht|s t d Ht|s t d vn sn Ht|s t d vn sn m Ht];
    pose proof (Hi t) as Hti; rewrite Ht in Hti; simpl in Hti.
  - (* invoke CAS *)
    split; try done. intros t'. simpl. destruct (decide (t' = t)) as [->|Hne];
      [rewrite upd_same; done | rewrite upd_other by done; apply Hi].
  - split; try done. intros t'. simpl. destruct (decide (t' = t)) as [->|Hne];
      [rewrite upd_same; done | rewrite upd_other by done; apply Hi].
  - apply kinv_kset; [done |]. simpl. split; [done | by rewrite H2].
  - apply kinv_kset; [done |]. simpl. split_and!; [done | split; [lia | done] | done].
  - apply kinv_kset; done.
  - apply kinv_kset; done.
  - apply kinv_kset; [done |]. simpl. split_and!; [done | split; [lia | done] | done].
  - (* L24 *)
    destruct (decide (kdr s = d)) as [<-|Hne]; [| apply (kinv_kset s t); done].
    destruct Hti as [[Hq Hv] [[Hd Hdv] Hps]].
    split; simpl; try done; try lia.
    + intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; done |].
      rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; try lia; done.
  - (* L40 succeeds *)
    destruct Hti as [[Hq Hv] [[Hd Hdv] Hps]]. unfold npast in H4. rewrite Hnv in H1, H2, H4, H5, Hq. simpl in *.
    assert (Hlo : ∀ q, q ≤ ps → upd (kvals s) (S ps) n q = kvals s q) by (intros; apply upd_other; lia).
    split; simpl.
    + lia.
    + by rewrite upd_same.
    + rewrite Hlo by lia. done.
    + unfold npast; simpl. destruct H4 as [Hl4 Hl4']. split; [lia | rewrite Hlo by lia; done].
    + destruct H4 as [Hl4 _]. intros Heq. lia.
    + intros t'. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same. simpl. unfold npast, dpast; simpl. split_and!; [lia | rewrite Hlo by lia; done | done | lia | by rewrite upd_same].
      * rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; rewrite ?Hnv; simpl; try lia; done.
  - apply kinv_kset; done.
  - (* L44 *)
    simpl in *. destruct Hti as [[Hd Hdv] [Hps [Hq Hv]]].
    destruct (decide (kdr s = d)) as [<-|Hne].
    + split; simpl; try done; try lia.
      * intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; simpl; split_and!; try done; lia |].
        rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; try lia; done.
    + apply kinv_kset; [done |]. simpl. split_and!; done.
  - (* finish_dram_half: the read *)
    destruct Hti as [[Hd Hdv] [Hps [Hq Hv]]].
    apply kinv_kset; [done |]. simpl.
    destruct (decide (ds (kdr s) = ds d ∧ dv (kdr s) = dv d)) as [[Hs1 Hs2]|Hn]; simpl.
    + split_and!; try done; lia.
    + split; [| done].
      destruct (decide (ds (kdr s) = ps)) as [Heq|]; [| lia].
      exfalso. apply Hn. split; [lia |]. rewrite H3, Hdv. congruence.
  - (* finish_dram_half: the DWCAS *)
    destruct Hti as [[Hd Hdv] [Hps [[Hd' Hdv'] [Hps' [Hq Hv]]]]].
    destruct (decide (kdr s = now)) as [<-|Hne]; [| apply kinv_kset; [done |]; simpl; split_and!; done].
    split; simpl; try done; try lia.
    + intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; simpl; split_and!; try done; lia |].
      rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; try lia; done.
  - apply kinv_kset; [done |]. simpl. by destruct (dm (kdr s)).
  - apply kinv_kset; done.
  - (* Algorithm 6.4, line 2.3 *)
    destruct (decide (kdr s = DP v true q)) as [Heq|]; [| apply kinv_kset; done].
    rewrite Heq in H1, H3, H5. simpl in H1, H3, H5. split; simpl; try done.
    + intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; done |].
      rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; rewrite ?Heq; simpl; try lia; done.
  - (* return *)
    assert (Hw : match w with None => True | Some (v, q) => q ≤ ds (kdr s) ∧ npast s v q end).
    { destruct op; exact Hti. }
    split; simpl; try done.
    + destruct w as [[v q]|]; simpl; [| done]. destruct (decide ((klw s).2 ≤ q)); [apply Hw | done].
    + destruct w as [[v q]|]; simpl; [| done]. destruct (decide ((klw s).2 ≤ q)); simpl; [| done].
      destruct Hw as [Hw1 [Hw2 _]]. lia.
    + intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; done |].
      rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; try lia; done.
  - apply kinv_kset; done.
  - apply kinv_kset; [done |]. simpl. split; [lia | done].
  - apply kinv_kset; [done |]. simpl. split_and!; [done | split; [lia | done] | destruct Hti; lia].
  - apply kinv_kset; [done |]. simpl. by destruct (decide (kdr s = d)).
  - (* Algorithm 6.3, line 4 *)
    destruct (decide (kdr s = d)) as [<-|Hne]; [| apply kinv_kset; done].
    destruct Hti as [[Hd Hdv] [[Hq Hv] Hle]].
    split; simpl; try done; try lia.
    + intros t'. destruct (decide (t' = t)) as [->|Hne]; [rewrite upd_same; done |].
      rewrite upd_other by done. eapply t_ok_mono; [| | | | apply Hi]; simpl; try lia; done.
Qed.

Lemma kinv_reach s : kreach Fix s → kinv s.
Proof. induction 1; [apply kinv_init | by eapply kinv_step]. Qed.

(** ** Loads after a successful CAS *)

(** A load's result is fixed by one step (Algorithm 6.4's line 1 on an
    unmarked pointer, or its line 2.3's successful DWCAS): [stale_load md]
    says some reachable step of mode [md] fixes a load's result [r] while
    NVMM is still at the newest returned write's sequence (no write's L40
    came after that write's), and [r] is not that write's value. *)
Definition stale_load (md : mode) : Prop :=
  ∃ s s' t i r, kreach md s ∧ kstep md s s' ∧ kth s t ≠ kth s' t ∧ kth s' t = KOp i OLoad (KRet r None) ∧
    (knv s).2 = (klw s).2 ∧ r ≠ (klw s).1.

(** In the fixed model, while NVMM is at the newest returned write's
    sequence, DRAM holds that write's pointer at that sequence (marked or
    not). *)
Theorem m2_fix_dram_shows_last_write s :
  kreach Fix s → (knv s).2 = (klw s).2 → ds (kdr s) = (klw s).2 ∧ dv (kdr s) = (klw s).1.
Proof.
  intros Hr Hq. destruct (kinv_reach _ Hr) as [H1 H2 H3 [_ H4] H5 _].
  split; [rewrite <- Hq; by apply H5 |]. rewrite H3, H5, Hq by done. done.
Qed.

(** In the fixed model, every load whose result is fixed while NVMM is at
    the newest returned write's sequence returns that write's value. *)
Theorem m2_fix_load_returns_last_write s s' t i r :
  kreach Fix s → kstep Fix s s' → kth s t ≠ kth s' t → kth s' t = KOp i OLoad (KRet r None) →
  (knv s).2 = (klw s).2 → r = (klw s).1.
Proof.
  intros Hr Hs Hmv Hld Hq. destruct (kinv_reach _ Hr) as [H1 H2 H3 [_ H4] H5 _].
  revert Hmv Hld. destruct Hs; intros Hmv Hld; repeat case_decide;
    repeat match goal with H : context [if dm ?x then _ else _] |- _ => destruct (dm x) end;
    unfold kset, ksetd, kinvoke, kl40, kreturn in Hmv, Hld; simpl in Hmv, Hld;
    match type of Hld with
    | upd _ ?u _ ?v = _ =>
        destruct (decide (v = u)) as [->|?];
        [rewrite upd_same in Hmv, Hld | rewrite upd_other in Hmv, Hld by done; done]
    end; try discriminate.
  - injection Hld as Hrv; subst r. rewrite H3, H5, Hq by done. done.
  - injection Hld as Hrv; subst r. match goal with E : kdr _ = DP _ _ _ |- _ => rewrite E in H3, H5 end.
    simpl in H3, H5. rewrite H3, H5, Hq by done. done.
Qed.

Theorem m2_fix_no_stale_load : ¬ stale_load Fix.
Proof.
  intros (s & s' & t & i & r & Hr & Hs & Hmv & Hld & Hq & Hne).
  apply Hne. by eapply m2_fix_load_returns_last_write.
Qed.

(** ** A successful CAS followed only by loads that miss it *)

(** A history in which a CAS(a, b), a ≠ b, returns [a] (success: the
    register's CAS returns the value it found), every other operation is a
    load, and a load invoked after that return returns [a], is not durably
    linearizable for [reg v0], whatever [v0]. *)
Lemma cas_then_load_not_durably_linearizable v0 (h h1 h2 : history mop nat) i a b j :
  h = h1 ++ Return i a :: h2 → a ≠ b → i ≠ j →
  (∀ k t op, Invoke k t op ∈ h → (k = i ∧ op = OCas a b) ∨ (k ≠ i ∧ op = OLoad)) →
  ¬ invoked h1 j → Return j a ∈ h2 →
  ¬ durably_linearizable (reg v0) h.
Proof.
  intros Eh Hab Hij Hops Hj Hret (xh & [Herase Hok Hacc]).
  set (pl := points xh).
  assert (Hop : ∀ k k' op v, pl !! k = Some (k', op, v) → (k' = i ∧ op = OCas a b) ∨ (k' ≠ i ∧ op = OLoad)).
  { intros k k' op v Hk. apply elem_of_list_lookup_2, elem_of_points in Hk.
    destruct (xl_op _ _ _ _ Hok Hk) as [t Ht]. rewrite Herase in Ht. exact (Hops _ _ _ Ht). }
  assert (Hpt : ∀ k v, Return k v ∈ h → ∃ n op, pl !! n = Some (k, op, v)).
  { intros k v Hin. rewrite <- Herase in Hin. apply elem_of_erase, elem_of_list_split in Hin as (c & d & E).
    destruct (Hok _ _ _ E) as [op Hop']. apply elem_of_points, elem_of_list_lookup in Hop' as (n & Hn).
    exists n, op. unfold pl. rewrite E, points_app. by apply lookup_app_l_Some. }
  assert (Hacc' : runs (reg v0) v0 (effects pl)) by exact Hacc.
  assert (Hat : ∀ k k' op v, pl !! k = Some (k', op, v) →
            v = ret (sts v0 (effects pl) k) op ∧ sts v0 (effects pl) (S k) = post (sts v0 (effects pl) k) op).
  { intros k k' op v Hk. apply (runs_at v0); [done |]. unfold effects. by rewrite list_lookup_fmap, Hk. }
  destruct (Hpt i a) as (n0 & o0 & H0); [rewrite Eh; apply elem_of_app; right; by left |].
  destruct (Hpt j a) as (n3 & o3 & H3); [rewrite Eh; apply elem_of_app; right; by right |].
  assert (o0 = OCas a b) as -> by (destruct (Hop _ _ _ _ H0); naive_solver).
  assert (o3 = OLoad) as -> by (destruct (Hop _ _ _ _ H3); naive_solver).
  assert (n0 < n3).
  { apply (rt_lt xh h1 h2 i a j n0 n3 (OCas a b) a OLoad a Hok); try done. by rewrite Herase. }
  pose proof (lookup_lt_Some _ _ _ H3) as Hlen.
  destruct (Hat _ _ _ _ H0) as [Hv0 Hs0]. simpl in Hv0.
  (* from the CAS's point on, only loads: the register stays b *)
  assert (∀ k, n0 < k → k ≤ n3 → sts v0 (effects pl) k = b) as Hb.
  { induction k as [|k IH]; intros Hk Hk3; [lia |].
    destruct (decide (k = n0)) as [->|Hne].
    - rewrite Hs0, <- Hv0. simpl. by rewrite decide_True.
    - destruct (lookup_lt_is_Some_2 pl k ltac:(lia)) as [[[k' op] v] Hpk].
      destruct (Hat _ _ _ _ Hpk) as [_ ->]. rewrite IH by lia.
      destruct (Hop _ _ _ _ Hpk) as [[-> ->]|[_ ->]]; [| done].
      pose proof (pt_index _ _ _ _ _ _ _ _ Hok Hpk H0). lia. }
  destruct (Hat _ _ _ _ H3) as [Hv3 _]. simpl in Hv3. rewrite Hb in Hv3 by lia. done.
Qed.

(** ** The runs *)

Ltac kcur R := match type of R with kreach _ ?x => x end.
Ltac knorm R := match type of R with kreach ?m ?x => let y := eval vm_compute in x in change (kreach m y) in R end.
Ltac kgo R p := let R' := fresh "R" in pose proof (kr_step _ _ _ R p) as R'; clear R; rename R' into R; knorm R.

(** Finding M2 as shuttle found it ([Once]), from [kinit 1 0 true] (right
    after the field's recovery copied [mark(1)]): thread 0's CAS(1, 2)
    reads NVMM [(1, 0)] (L5), DRAM [(mark 1, 0)] (L9), writes NVMM
    [(2, 1)] (L40); thread 1's load unmarks DRAM to [(1, 0)] (Algorithm
    6.4, lines 1, 2.1, 2.3) and returns 1; thread 0's L44 expects
    [(mark 1, 0)], fails, and the CAS returns 1 (success); 12 steps. *)
Ltac once_prefix R :=
  pose proof (kr_init Once 1 0 true) as R; knorm R;
  let x := kcur R in kgo R (k_inv_cas Once x 0 1 2 eq_refl);
  let x := kcur R in kgo R (k_l5 Once x 0 0 1 2 eq_refl);
  let x := kcur R in kgo R (k_l9_go Once x 0 0 1 2 1 0 eq_refl eq_refl eq_refl);
  let x := kcur R in kgo R (k_l40_ok Once x 0 0 1 2 1 0 (DP 1 true 0) eq_refl eq_refl);
  let x := kcur R in kgo R (k_inv_load Once x 1 eq_refl);
  let x := kcur R in kgo R (k_ld1 Once x 1 1 eq_refl);
  let x := kcur R in kgo R (k_ld2 Once x 1 1 1 eq_refl);
  let x := kcur R in kgo R (k_ld3 Once x 1 1 1 0 eq_refl);
  let x := kcur R in kgo R (k_ret Once x 1 1 OLoad 1 None eq_refl);
  let x := kcur R in kgo R (k_l44 Once x 0 0 1 2 1 0 (DP 1 true 0) eq_refl);
  let x := kcur R in kgo R (k_ret Once x 0 0 (OCas 1 2) 1 (Some (2, 1)) eq_refl);
  let x := kcur R in kgo R (k_inv_load Once x 1 eq_refl).

(** Then thread 1's next load reads DRAM's unmarked 1 (line 1) and
    returns it: NVMM is still at the CAS's sequence 1. *)
Theorem m2_once_stale_load : stale_load Once.
Proof.
  once_prefix R. let x := kcur R in
  exists x, (kset x 1 (KOp 2 OLoad (KRet 1 None))), 1, 2, 1.
  split_and!; [exact R | | vm_compute; discriminate | vm_compute; reflexivity | vm_compute; reflexivity |
               vm_compute; discriminate].
  let x := kcur R in exact (k_ld1 Once x 1 2 eq_refl).
Qed.

Definition m2_hist : history mop nat :=
  [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1; Return 0 1; Invoke 2 1 OLoad; Return 2 1].

Lemma m2_once_run : ∃ s, kreach Once s ∧ khist s = m2_hist ∧ knv s = (2, 1) ∧ kdr s = DP 1 false 0.
Proof.
  once_prefix R.
  let x := kcur R in kgo R (k_ld1 Once x 1 2 eq_refl).
  let x := kcur R in kgo R (k_ret Once x 1 2 OLoad 1 None eq_refl).
  eexists. split; [exact R |]. split_and!; vm_compute; reflexivity.
Qed.

Lemma m2_hist_not_durably_linearizable v0 : ¬ durably_linearizable (reg v0) m2_hist.
Proof.
  apply (cas_then_load_not_durably_linearizable v0 _ [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1]
           [Invoke 2 1 OLoad; Return 2 1] 0 1 2 2); try done.
  - intros k t op Hin. apply elem_of_list_In in Hin. simpl in Hin.
    destruct_or!; simplify_eq; [left | right | right]; done.
  - intros (t & op & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver.
  - apply elem_of_list_In. simpl. tauto.
Qed.

(** M2 (the code's L44 run once, mutant [Line44Once]): a reachable state
    whose history is not durably linearizable. *)
Theorem m2_once_not_durably_linearizable :
  ∃ s, kreach Once s ∧ khist s = m2_hist ∧ ¬ durably_linearizable (reg 1) (khist s).
Proof.
  destruct m2_once_run as (s & Hr & Hh & _). exists s. split_and!; [done | done |].
  rewrite Hh. apply m2_hist_not_durably_linearizable.
Qed.

(** The seed's L44 as printed ([Seed]), from the same state: thread 0's
    CAS(1, 2) reads NVMM [(1, 0)], DRAM [(mark 1, 0)], writes NVMM [(2, 1)];
    its L44 expects NVMM's [before], the unmarked [(1, 0)], fails on
    [(mark 1, 0)], and the CAS returns 1 (success); no other thread is
    needed: 6 steps.  Then the same thread's load unmarks DRAM and returns
    1. *)
Ltac seed_prefix R :=
  pose proof (kr_init Seed 1 0 true) as R; knorm R;
  let x := kcur R in kgo R (k_inv_cas Seed x 0 1 2 eq_refl);
  let x := kcur R in kgo R (k_l5 Seed x 0 0 1 2 eq_refl);
  let x := kcur R in kgo R (k_l9_go Seed x 0 0 1 2 1 0 eq_refl eq_refl eq_refl);
  let x := kcur R in kgo R (k_l40_ok Seed x 0 0 1 2 1 0 (DP 1 true 0) eq_refl eq_refl);
  let x := kcur R in kgo R (k_l44 Seed x 0 0 1 2 1 0 (DP 1 true 0) eq_refl);
  let x := kcur R in kgo R (k_ret Seed x 0 0 (OCas 1 2) 1 (Some (2, 1)) eq_refl);
  let x := kcur R in kgo R (k_inv_load Seed x 0 eq_refl);
  let x := kcur R in kgo R (k_ld1 Seed x 0 1 eq_refl);
  let x := kcur R in kgo R (k_ld2 Seed x 0 1 1 eq_refl).

Theorem m2_seed_stale_load : stale_load Seed.
Proof.
  seed_prefix R. let x := kcur R in
  exists x, (ksetd x 0 (KOp 1 OLoad (KRet 1 None)) (DP 1 false 0)), 0, 1, 1.
  split_and!; [exact R | | vm_compute; discriminate | vm_compute; reflexivity | vm_compute; reflexivity |
               vm_compute; discriminate].
  let x := kcur R in exact (k_ld3 Seed x 0 1 1 0 eq_refl).
Qed.

Definition seed_hist : history mop nat :=
  [Invoke 0 0 (OCas 1 2); Return 0 1; Invoke 1 0 OLoad; Return 1 1].

Lemma m2_seed_run : ∃ s, kreach Seed s ∧ khist s = seed_hist ∧ knv s = (2, 1) ∧ kdr s = DP 1 false 0.
Proof.
  seed_prefix R.
  let x := kcur R in kgo R (k_ld3 Seed x 0 1 1 0 eq_refl).
  let x := kcur R in kgo R (k_ret Seed x 0 1 OLoad 1 None eq_refl).
  eexists. split; [exact R |]. split_and!; vm_compute; reflexivity.
Qed.

Lemma seed_hist_not_durably_linearizable v0 : ¬ durably_linearizable (reg v0) seed_hist.
Proof.
  apply (cas_then_load_not_durably_linearizable v0 _ [Invoke 0 0 (OCas 1 2)]
           [Invoke 1 0 OLoad; Return 1 1] 0 1 2 1); try done.
  - intros k t op Hin. apply elem_of_list_In in Hin. simpl in Hin.
    destruct_or!; simplify_eq; [left | right]; done.
  - intros (t & op & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver.
  - apply elem_of_list_In. simpl. tauto.
Qed.

(** The seed's L44 as printed: a reachable state whose history is not
    durably linearizable. *)
Theorem m2_seed_not_durably_linearizable :
  ∃ s, kreach Seed s ∧ khist s = seed_hist ∧ ¬ durably_linearizable (reg 1) (khist s).
Proof.
  destruct m2_seed_run as (s & Hr & Hh & _). exists s. split_and!; [done | done |].
  rewrite Hh. apply seed_hist_not_durably_linearizable.
Qed.

(** ** The fixed model over histories: no run has the refuted pattern *)

(** The program counters an operation can have. *)
Definition pc_wf (op : mop) (pc : kpc) : Prop :=
  match op, pc with
  | OLoad, (KLd | KLd2 _ | KLd3 _ _ | KRet _ None) => True
  | OCas _ _, (K5 | K9 _ _ | K24 _ _ _ | K40 _ _ _ | K44 _ _ _ | KF _ _ | KFc _ _ _) => True
  | OCas e _, KRet r None => r ≠ e
  | OCas e n, KRet r (Some (n', _)) => r = e ∧ n' = n
  | _, _ => False
  end.

(** The sequence of the NVMM write of a CAS past its L40. *)
Definition past_l40 (pc : kpc) : option nat :=
  match pc with
  | K44 _ ps _ | KF _ ps | KFc _ _ ps => Some (S ps)
  | KRet _ (Some (_, q)) => Some q
  | _ => None
  end.

Ltac shI pc := left; eexists _, _, pc; split_and!; [eassumption | reflexivity | done | first [by left | by right]].
Ltac shC := right; right; left; do 5 eexists; split_and!;
  [eassumption | reflexivity | reflexivity | reflexivity | reflexivity | intros _; simpl; done |
   left; split; [reflexivity | intros ? Hq; simpl in Hq |- *; done]].
Ltac shR := right; right; right;
  match goal with |- context [upd (kth ?s) ?t ?X = upd (kth ?s) _ _] => exists t, X end;
  split_and!; [first [by left | by right; eexists] | first [by left | by right; eexists] | done..].

(** Every step is an invocation, a return, a step of an operation inside
    its thread (which moves NVMM only at L40), or a recovery step. *)
Lemma kstep_shape md s s' : kstep md s s' →
  (∃ t op pc, kth s t = KIdle ∧ s' = kinvoke s t op pc ∧ pc_wf op pc ∧ (pc = K5 ∨ pc = KLd)) ∨
  (∃ t k op r w, kth s t = KOp k op (KRet r w) ∧ s' = kreturn s t k r w) ∨
  (∃ t k op pc pc', kth s t = KOp k op pc ∧ kth s' = upd (kth s) t (KOp k op pc') ∧ khist s' = khist s ∧
     knid s' = knid s ∧ klw s' = klw s ∧ (pc_wf op pc → pc_wf op pc') ∧
     ((knv s' = knv s ∧ ∀ q, past_l40 pc' = Some q → past_l40 pc = Some q) ∨
      (∃ e n pv ps d, op = OCas e n ∧ pc = K40 pv ps d ∧ pc' = K44 pv ps d ∧ knv s' = (n, S ps)))) ∨
  (∃ t x, (kth s t = KIdle ∨ ∃ r, kth s t = KRec r) ∧ (x = KIdle ∨ ∃ r, x = KRec r) ∧
     kth s' = upd (kth s) t x ∧ khist s' = khist s ∧ knid s' = knid s ∧ knv s' = knv s ∧ klw s' = klw s).
Proof.
  intros Hs.
  destruct Hs as [s t e n Ht|s t Ht|s t i e n Ht|s t i e n pv ps Ht Hp|s t i e n pv ps Ht Hp Hp'
                 |s t i e n pv ps Ht Hp Hpv|s t i e n pv ps Ht Hp Hpv|s t i e n pv ps d Ht
                 |s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht Hnv|s t i e n pv ps d Ht
                 |s t i e n d ps Ht|s t i e n d now ps Ht|s t i Ht|s t i v Ht|s t i v q Ht
                 |s t i op r w Ht|s t Ht|s t Ht|s t d Ht|s t d vn sn Ht|s t d vn sn m Ht];
    repeat case_decide.
  all: try match goal with |- context [l44_fail ?m _ _ _ _] => destruct m end.
  all: try match goal with |- context [if dm ?x then _ else _] => destruct (dm x) end.
  all: simpl.
  all: try (match goal with H : kth _ ?t = KOp ?i ?op (KRet ?r ?w) |- _ =>
              right; left; by exists t, i, op, r, w end).
  all: try (match goal with H : kth ?s ?t = KOp ?i ?op (K40 ?pv ?ps ?d), E : knv ?s = (_, _) |- _ =>
              right; right; left; exists t, i, op, (K40 pv ps d), (K44 pv ps d);
              split_and!; try done; right; by eexists _, _, _, _, _ end).
  all: first [shI K5 | shI KLd | shC | shR].
Qed.

(** Well-formedness of the ghost history against the threads (any mode). *)
Record hinv (s : kst) : Prop := {
  g_th : ∀ t k op pc, kth s t = KOp k op pc →
           Invoke k t op ∈ khist s ∧ (∀ v, Return k v ∉ khist s) ∧ pc_wf op pc;
  g_fresh : ∀ k t op, Invoke k t op ∈ khist s → k < knid s;
  g_uniq : ∀ k t op t' op', Invoke k t op ∈ khist s → Invoke k t' op' ∈ khist s → t = t' ∧ op = op';
  g_ret : ∀ k v, Return k v ∈ khist s → ∃ t op, Invoke k t op ∈ khist s
}.

Lemma in_snoc {A} (x y : A) l : x ∈ l ++ [y] ↔ x ∈ l ∨ x = y.
Proof. rewrite elem_of_app, elem_of_list_singleton. done. Qed.

Lemma hinv_step md s s' : hinv s → kstep md s s' → hinv s'.
Proof.
  intros [G1 G2 G3 G4] Hs.
  destruct (kstep_shape _ _ _ Hs) as [(t & op & pc & Ht & -> & Hw & Hpc)|
    [(t & k & op & r & w & Ht & ->)|[(t & k & op & pc & pc' & Ht & Eth & Eh & En & El & Hw & Hnv)|
     (t & x & Ht & Hx & Eth & Eh & En & Env & El)]]].
  - split; simpl.
    + intros t' k op' pc' H'. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. injection H' as <- <- <-. split_and!; [by apply in_snoc; right | | done].
        intros v [Hin|Hin]%in_snoc; [| done]. destruct (G4 _ _ Hin) as (t' & op' & Hi). apply G2 in Hi. lia.
      * rewrite upd_other in H' by done. destruct (G1 _ _ _ _ H') as (Hi & Hr & Hw'). split_and!; [by apply in_snoc; left | | done].
        intros v [Hin|Hin]%in_snoc; [by eapply Hr | done].
    + intros k t' op' [Hin|Hin]%in_snoc; [apply G2 in Hin; lia | injection Hin as -> _ _; lia].
    + intros k t1 op1 t2 op2 [H1|H1]%in_snoc [H2|H2]%in_snoc.
      * by eapply G3.
      * injection H2 as -> -> ->. apply G2 in H1. lia.
      * injection H1 as -> -> ->. apply G2 in H2. lia.
      * injection H1 as -> -> ->. by injection H2 as -> ->.
    + intros k v [Hin|Hin]%in_snoc; [| done]. destruct (G4 _ _ Hin) as (t' & op' & Hi). exists t', op'. by apply in_snoc; left.
  - destruct (G1 _ _ _ _ Ht) as (Hi & Hr & Hw). split; simpl.
    + intros t' k' op' pc' H'. destruct (decide (t' = t)) as [->|Hne]; [by rewrite upd_same in H' |].
      rewrite upd_other in H' by done. destruct (G1 _ _ _ _ H') as (Hi' & Hr' & Hw'). split_and!; [by apply in_snoc; left | | done].
      intros v [Hin|Hin]%in_snoc; [by eapply Hr' |]. injection Hin as -> ->.
      destruct (G3 _ _ _ _ _ Hi Hi'). congruence.
    + intros k' t' op' [Hin|Hin]%in_snoc; [by eapply G2 | done].
    + intros k1 t1 op1 t2 op2 [H1|H1]%in_snoc [H2|H2]%in_snoc; try done. by eapply G3.
    + intros k' v [Hin|Hin]%in_snoc.
      * destruct (G4 _ _ Hin) as (t' & op' & Hi'). exists t', op'. by apply in_snoc; left.
      * injection Hin as -> ->. exists t, op. by apply in_snoc; left.
  - split; rewrite ?Eh, ?En, ?Eth; [| done | done | done].
    intros t' k' op' pc'' H'. destruct (decide (t' = t)) as [->|Hne].
    + rewrite upd_same in H'. injection H' as <- <- <-. destruct (G1 _ _ _ _ Ht) as (? & ? & ?). auto.
    + rewrite upd_other in H' by done. auto.
  - split; rewrite ?Eh, ?En, ?Eth; [| done | done | done].
    intros t' k' op' pc'' H'. destruct (decide (t' = t)) as [->|Hne].
    + rewrite upd_same in H'. destruct Hx as [->|[? ->]]; done.
    + rewrite upd_other in H' by done. auto.
Qed.

Lemma hinv_reach md s : kreach md s → hinv s.
Proof.
  induction 1 as [v0 q0 m0|s s' _ IH Hs]; [| by eapply hinv_step].
  split; simpl; [done | intros ??? ?%elem_of_nil; done | intros ????? ?%elem_of_nil; done |
                 intros ?? ?%elem_of_nil; done].
Qed.

(** The history's only write: operation [i], a CAS(a, b). *)
Definition only_cas (h : history mop nat) (i a b : nat) : Prop :=
  ∀ k t op, Invoke k t op ∈ h → (k = i ∧ op = OCas a b) ∨ (k ≠ i ∧ op = OLoad).

Lemma snoc_split {A} (h h1 h2 : list A) x y :
  h ++ [x] = h1 ++ y :: h2 → (h2 = [] ∧ h = h1 ∧ x = y) ∨ (∃ h2', h2 = h2' ++ [x] ∧ h = h1 ++ y :: h2').
Proof.
  intros E. induction h2 as [|z h2' _] using rev_ind.
  - left. apply app_inj_tail in E as [-> ->]. done.
  - right. exists h2'. rewrite app_comm_cons, app_assoc in E. apply app_inj_tail in E as [-> ->]. done.
Qed.

(** While [i] is the history's only write: once past L40, NVMM holds [i]'s
    write; once [i] returned success, NVMM and the newest returned write
    are [(b, q)]; every load invoked after that return and fixed returns
    [b]. *)
Record cinv (i a b : nat) (s : kst) : Prop := {
  c_nv : ∀ t pc q, kth s t = KOp i (OCas a b) pc → past_l40 pc = Some q → knv s = (b, q);
  c_ret : Return i a ∈ khist s → ∃ q, knv s = (b, q) ∧ klw s = (b, q);
  c_load : ∀ h1 h2 j r, khist s = h1 ++ Return i a :: h2 → j ≠ i → ¬ invoked h1 j →
             (Return j r ∈ h2 ∨ ∃ t, kth s t = KOp j OLoad (KRet r None)) → r = b
}.

Lemma cinv_reach i a b s : kreach Fix s → only_cas (khist s) i a b → cinv i a b s.
Proof.
  induction 1 as [v0 q0 m0|s s' Hr IH Hs].
  { intros _. split; simpl; [done | intros ?%elem_of_nil; done |].
    intros h1 h2 j r E. by destruct h1. }
  intros Ho'.
  pose proof (kinv_reach _ Hr) as I. pose proof (hinv_reach _ _ Hr) as [G1 G2 G3 G4].
  destruct (kstep_shape _ _ _ Hs) as [(t & op & pc & Ht & Es & Hw & Hpc)|
    [(t & k & op & r & w & Ht & Es)|[(t & k & op & pc & pc' & Ht & Eth & Eh & En & El & Hw & Hnv)|
     (t & x & Ht & Hx & Eth & Eh & En & Env & El)]]].
  - (* invoke *)
    assert (Ho : only_cas (khist s) i a b).
    { intros k t' op' Hin. apply (Ho' k t' op'). rewrite Es. by apply in_snoc; left. }
    destruct (IH Ho) as [C1 C2 C3]. subst s'. split; simpl.
    + intros t' pc' q H' Hq. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. injection H' as _ _ <-. by destruct Hpc as [->| ->].
      * rewrite upd_other in H' by done. eauto.
    + intros [Hin|Hin]%in_snoc; [auto | done].
    + intros h1 h2 j r E Hji Hj Hor. apply snoc_split in E as [(_ & _ & ?)|(h2' & -> & E)]; [done |].
      apply (C3 h1 h2' j r E Hji Hj). destruct Hor as [[Hin|Hin]%in_snoc|(t' & H')]; [by left | done |].
      destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. injection H' as _ _ Hpc'. rewrite Hpc' in Hpc. destruct Hpc; discriminate.
      * rewrite upd_other in H' by done. right. eauto.
  - (* return *)
    assert (Ho : only_cas (khist s) i a b).
    { intros k' t' op' Hin. apply (Ho' k' t' op'). rewrite Es. by apply in_snoc; left. }
    destruct (IH Ho) as [C1 C2 C3]. destruct (G1 _ _ _ _ Ht) as (Hi & Hr' & Hw).
    subst s'. split; simpl.
    + intros t' pc' q H' Hq. destruct (decide (t' = t)) as [->|Hne]; [by rewrite upd_same in H' |].
      rewrite upd_other in H' by done. eauto.
    + intros [Hin|Hin]%in_snoc.
      * destruct (C2 Hin) as (q & Hn & Hl). exists q. split; [done |].
        destruct (Ho _ _ _ Hi) as [[-> ->]|[Hki ->]]; [by destruct (Hr' a) |].
        destruct w as [[??]|]; [done |]. done.
      * injection Hin as -> ->. destruct (Ho _ _ _ Hi) as [[_ ->]|[? _]]; [| done].
        destruct w as [[n' q]|]; simpl in Hw; [| done]. destruct Hw as [_ ->].
        pose proof (C1 _ _ q Ht eq_refl) as Hn. exists q. split; [done |].
        destruct (i_lw _ I) as [Hq _]. rewrite Hn in Hq. simpl in Hq.
        unfold newlw. by rewrite decide_True by done.
    + intros h1 h2 j r' E Hji Hj Hor. apply snoc_split in E as [(-> & <- & E)|(h2' & -> & E)].
      * exfalso. destruct Hor as [Hin|(t' & H')]; [by apply elem_of_nil in Hin |].
        destruct (decide (t' = t)) as [->|Hne]; [by rewrite upd_same in H' |].
        rewrite upd_other in H' by done. destruct (G1 _ _ _ _ H') as (Hin & _). apply Hj. by exists t', OLoad.
      * destruct Hor as [[Hin|Hin]%in_snoc|(t' & H')].
        -- eapply C3; [exact E | done | done | by left].
        -- injection Hin as -> ->. destruct (Ho _ _ _ Hi) as [[? _]|[_ ->]]; [done |].
           destruct w as [[??]|]; [done |]. eapply C3; [exact E | done | done | right; eauto].
        -- destruct (decide (t' = t)) as [->|Hne]; [by rewrite upd_same in H' |].
           rewrite upd_other in H' by done. eapply C3; [exact E | done | done | right; eauto].
  - (* a step inside an operation *)
    assert (Ho : only_cas (khist s) i a b) by (rewrite <- Eh; done).
    destruct (IH Ho) as [C1 C2 C3]. destruct (G1 _ _ _ _ Ht) as (Hi & Hr' & _).
    split; rewrite ?Eh.
    + intros t' pc'' q H' Hq. rewrite Eth in H'. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. injection H' as -> -> ->.
        destruct Hnv as [[-> Hp]|(e & n & pv & ps & d & He & -> & -> & ->)]; [eauto |].
        injection He as -> ->. simpl in Hq. by injection Hq as ->.
      * rewrite upd_other in H' by done.
        destruct Hnv as [[-> _]|(e & n & pv & ps & d & -> & -> & -> & _)]; [eauto |].
        exfalso. destruct (Ho _ _ _ Hi) as [[-> _]|[_ ?]]; [| done].
        destruct (G1 _ _ _ _ H') as (Hi' & _). destruct (G3 _ _ _ _ _ Hi Hi'). congruence.
    + intros Hin. destruct (C2 Hin) as (q & Hn & Hl). exists q. rewrite El. split; [| done].
      destruct Hnv as [[-> _]|(e & n & pv & ps & d & -> & _ & _ & _)]; [done |].
      exfalso. destruct (Ho _ _ _ Hi) as [[-> _]|[_ ?]]; [| done]. by eapply Hr'.
    + intros h1 h2 j r E Hji Hj Hor.
      destruct Hor as [Hin|(t' & H')]; [eapply C3; [exact E | done | done | by left] |].
      rewrite Eth in H'. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. injection H' as -> -> ->.
        destruct (decide (pc = KRet r None)) as [->|Hpc]; [eapply C3; [exact E | done | done | right; eauto] |].
        destruct (C2 ltac:(rewrite E; apply elem_of_app; right; by left)) as (q & Hn & Hl).
        assert (r = (klw s).1) as Hrb.
        { eapply (m2_fix_load_returns_last_write s s' t); try done.
          - rewrite Ht, Eth, upd_same. intros H'. injection H' as ?. done.
          - by rewrite Eth, upd_same.
          - by rewrite Hn, Hl. }
        by rewrite Hl in Hrb.
      * rewrite upd_other in H' by done. eapply C3; [exact E | done | done | right; eauto].
  - (* a recovery step *)
    assert (Ho : only_cas (khist s) i a b) by (rewrite <- Eh; done).
    destruct (IH Ho) as [C1 C2 C3]. split; rewrite ?Eh, ?Env, ?El.
    + intros t' pc' q H'. rewrite Eth in H'. destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. by destruct Hx as [->|[? ->]].
      * rewrite upd_other in H' by done. eauto.
    + done.
    + intros h1 h2 j r E Hji Hj Hor. apply (C3 h1 h2 j r E Hji Hj).
      destruct Hor as [Hin|(t' & H')]; [by left |]. right. rewrite Eth in H'.
      destruct (decide (t' = t)) as [->|Hne].
      * rewrite upd_same in H'. by destruct Hx as [->|[? ->]].
      * rewrite upd_other in H' by done. eauto.
Qed.

(** The fixed model has no run whose history shows the pattern of
    [cas_then_load_not_durably_linearizable]: a CAS(a, b) that returned
    [a] (success), no other write in the history, and a load invoked after
    that return which returned [a]. *)
Theorem m2_fix_no_missed_cas s h1 h2 i a b j :
  kreach Fix s → khist s = h1 ++ Return i a :: h2 → a ≠ b → i ≠ j → only_cas (khist s) i a b →
  ¬ invoked h1 j → Return j a ∈ h2 → False.
Proof.
  intros Hr E Hab Hij Ho Hj Hret. destruct (cinv_reach _ _ _ _ Hr Ho) as [_ _ C3].
  apply Hab. eapply C3; [exact E | done | done | by left].
Qed.

(** Neither refuted history happens in the fixed model. *)
Theorem m2_hist_unreachable_in_fix s : kreach Fix s → khist s ≠ m2_hist.
Proof.
  intros Hr E.
  apply (m2_fix_no_missed_cas s [Invoke 0 0 (OCas 1 2); Invoke 1 1 OLoad; Return 1 1]
           [Invoke 2 1 OLoad; Return 2 1] 0 1 2 2); try done.
  - intros k t op Hin. rewrite E in Hin. apply elem_of_list_In in Hin. simpl in Hin.
    destruct_or!; simplify_eq; [left | right | right]; done.
  - intros (t & op & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver.
  - apply elem_of_list_In. simpl. tauto.
Qed.

Theorem seed_hist_unreachable_in_fix s : kreach Fix s → khist s ≠ seed_hist.
Proof.
  intros Hr E.
  apply (m2_fix_no_missed_cas s [Invoke 0 0 (OCas 1 2)] [Invoke 1 0 OLoad; Return 1 1] 0 1 2 1); try done.
  - intros k t op Hin. rewrite E in Hin. apply elem_of_list_In in Hin. simpl in Hin.
    destruct_or!; simplify_eq; [left | right]; done.
  - intros (t & op & Hin). apply elem_of_list_In in Hin. simpl in Hin. naive_solver.
  - apply elem_of_list_In. simpl. tauto.
Qed.
