(** * Mirror's pointer field with recovery marks, the M2 fix, crashes and persistence

    HEADER *)
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
    cgd s' = cgd s → (crec s = false → cws s' = cws s ∧ cdr s' = cdr s) →
    tok s' t x.
  Proof.
    intros Ht Hpw Hrec Hws Hmk Hdr Hxh Hnopt Hin1 Hin2 Hgd Hpre.
    assert (Hin : ∀ p, p ∈ cws s → p ∈ cws s').
    { intros p (w & Hw)%elem_of_list_lookup. apply elem_of_list_lookup. eauto. }
    assert (Hdur : ∀ p lim lim', lim ≤ lim' → durable s p lim → durable s' p lim').
    { intros p lim lim' Hl (w & Hw & Hlt). exists w. split; [eauto | lia]. }
    assert (Hnv : crec s = false → cnv s' = cnv s).
    { intros Hr. unfold cnv. by rewrite (proj1 (Hpre Hr)). }
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
    - destruct pc; simpl in *; rewrite ?Hrec, ?Hpw, ?Hgd.
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
      + intros Hr. split; [done | by apply Hdpre].
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
End inv.
