(** * Memento's CHECKPOINT: stable across any number of crashes

    Justifies the CHECKPOINT memento of the seed paper (Cho, Jeon, Kang,
    "Practical Detectability for Persistent Lock-Free Data Structures", §2.2,
    steps ①–⑤, with the timestamps of §2.5) and the corresponding
    [Checkpoint] memento of the published implementation
    ([src/ploc/checkpoint.rs] of kaist-cp/memento).  There is no perdure TLA+
    module for CHECKPOINT; the TLA+ module for detectable CAS is
    [specs/memento/DetectableCAS.tla] (see [DetCas.v]).

    The memento is two slots, each a (timestamp, value) pair ([memento]).
    A call [CHECKPOINT(v)] with the thread's [LOCAL] timestamp [local] and a
    fresh [rdtscp] timestamp [t]:
    - reads both slots; the latest is the one with the larger timestamp;
    - if the latest timestamp exceeds [local], the call is a replay of a call
      that checkpointed before a crash: it returns the latest slot's value and
      writes nothing;
    - otherwise it writes [v] to the stale slot's value, then [t] to the stale
      slot's timestamp, and returns [v].
    Persistence: the value store persists before the timestamp store (same
    cache line, or flushed before the timestamp is written).  A crash during
    the two stores therefore leaves the stale slot either with its old
    timestamp and a torn value -- ANY value of [V]: nothing persisted, part
    of the words, or all of them ([CutBeforeTs torn]) -- or with the new
    timestamp and exactly [v] ([CutAfterTs]).  A crash between calls changes
    nothing in PM.

    The specification is an atomic cell holding (timestamp, value) ([acall],
    [acrash]): a call replays the cell if its timestamp exceeds [local], or
    atomically replaces it with [(t, v)]; a crashed call took effect iff its
    timestamp persisted.

    Proved, for every trace of any length of calls and crashed calls
    (arbitrarily many crashes, each with any allowed cut), with timestamps
    strictly increasing along the trace (the hypothesis [ts_fresh]: rdtscp is
    constant-rate and calibrated at restart, §2.5):
    - [run_refines]: the concrete run returns exactly the values the atomic
      cell returns, and ends with the cell's content in its latest slot;
    - [returned_value_not_torn]: every returned value is the initial value
      or the argument of a call that took effect -- never a torn value;
    - [recovery_returns_last_checkpoint]: a replaying call returns the value
      of the last checkpoint whose timestamp persisted (the last completed
      one, or the in-flight one if its timestamp persisted);
    - [completed_checkpoint_survives_crashes]: after a completed checkpoint
      of [v] at [t], any number of crashed re-executions that do not persist
      a newer timestamp leave [v] recoverable: the re-execution with [LOCAL
      < t] returns [v];
    - [latest_ts_monotone]: the latest timestamp never decreases (a
      checkpoint, once recoverable, is only ever replaced by a newer one).
    And the counterexample for the other order: [ts_first_returns_torn] (if
    the timestamp could persist before the value, recovery would return a
    torn value).

    Not covered: how [LOCAL] is computed (the replay discipline of §2.3 is
    what makes [local] smaller than the checkpoint's timestamp on the
    re-execution of the same call; the theorems hold for every [local]);
    timestamp calibration itself (taken as the hypothesis [ts_fresh]); the
    Px86 semantics beyond "the value persists before the timestamp"
    ([Core/Px86.v] proves the line and flush rules this relies on). *)
From iris.prelude Require Import prelude.
From Coq Require Import Lia Sorted.

Section checkpoint.
  Context {V : Type}.

  Record slot := Slot { sts : nat; sval : V }.
  Record memento := Mmt { slot0 : slot; slot1 : slot }.

  (** Slot 1 is the latest iff its timestamp is larger (slot 0 on a tie,
      which only happens while both are the initial 0). *)
  Definition latest_is1 (m : memento) : bool :=
    bool_decide (sts (slot0 m) < sts (slot1 m)).
  Definition get_slot (m : memento) (b : bool) : slot :=
    if b then slot1 m else slot0 m.
  Definition set_slot (m : memento) (b : bool) (s : slot) : memento :=
    if b then Mmt (slot0 m) s else Mmt s (slot1 m).
  Definition latest (m : memento) : slot := get_slot m (latest_is1 m).
  Definition stale (m : memento) : slot := get_slot m (negb (latest_is1 m)).
  (** Both stores of a checkpoint go to the stale slot. *)
  Definition write_stale (m : memento) (s : slot) : memento :=
    set_slot m (negb (latest_is1 m)) s.

  (** What a crash keeps of the two stores. *)
  Inductive cut := CutBeforeTs (torn : V) | CutAfterTs.

  Inductive event :=
    | Call (v : V) (local t : nat)
    | CrashedCall (v : V) (local t : nat) (c : cut).

  Definition ev_ts (e : event) : nat :=
    match e with Call _ _ t | CrashedCall _ _ t _ => t end.

  (** ** The implementation *)
  Definition call (m : memento) (v : V) (local t : nat) : memento * V :=
    if decide (local < sts (latest m)) then (m, sval (latest m))
    else (write_stale m (Slot t v), v).

  Definition crashed_call (m : memento) (v : V) (local t : nat) (c : cut) : memento :=
    if decide (local < sts (latest m)) then m
    else match c with
         | CutBeforeTs torn => write_stale m (Slot (sts (stale m)) torn)
         | CutAfterTs => write_stale m (Slot t v)
         end.

  (** The memento after a trace, and the values the completed calls returned. *)
  Fixpoint run (m : memento) (tr : list event) : memento * list V :=
    match tr with
    | [] => (m, [])
    | Call v local t :: tr' =>
        let '(m1, r) := call m v local t in
        let '(m2, rs) := run m1 tr' in (m2, r :: rs)
    | CrashedCall v local t c :: tr' => run (crashed_call m v local t c) tr'
    end.

  (** ** The specification: an atomic cell (timestamp, value) *)
  Definition acall (a : nat * V) (v : V) (local t : nat) : (nat * V) * V :=
    if decide (local < a.1) then (a, a.2) else ((t, v), v).

  Definition acrash (a : nat * V) (v : V) (local t : nat) (c : cut) : nat * V :=
    if decide (local < a.1) then a
    else match c with CutBeforeTs _ => a | CutAfterTs => (t, v) end.

  Fixpoint arun (a : nat * V) (tr : list event) : (nat * V) * list V :=
    match tr with
    | [] => (a, [])
    | Call v local t :: tr' =>
        let '(a1, r) := acall a v local t in
        let '(a2, rs) := arun a1 tr' in (a2, r :: rs)
    | CrashedCall v local t c :: tr' => arun (acrash a v local t c) tr'
    end.

  Definition abs (m : memento) : nat * V := (sts (latest m), sval (latest m)).

  (** rdtscp's timestamps increase along the trace and exceed every
      timestamp already in the memento (calibration at restart, §2.5). *)
  Definition ts_fresh (m : memento) (tr : list event) : Prop :=
    Forall (λ e, sts (latest m) < ev_ts e) tr ∧
    StronglySorted (λ e1 e2, ev_ts e1 < ev_ts e2) tr.

  (** ** The two stores on the slots *)
  Lemma stale_le_latest m : sts (stale m) ≤ sts (latest m).
  Proof.
    rewrite /stale /latest /latest_is1 /get_slot.
    case_bool_decide; simpl; lia.
  Qed.

  (** A timestamp larger than both makes the written slot the latest. *)
  Lemma latest_write_fresh m s :
    sts (latest m) < sts s → latest (write_stale m s) = s.
  Proof.
    destruct m as [[t0 v0] [t1 v1]].
    rewrite /latest /write_stale /latest_is1 /get_slot /set_slot /=.
    destruct s as [t v]; simpl. repeat case_bool_decide; simpl in *; intros; try done; lia.
  Qed.

  (** A torn value under the old timestamp leaves the latest slot alone. *)
  Lemma latest_write_torn m torn :
    latest (write_stale m (Slot (sts (stale m)) torn)) = latest m.
  Proof.
    destruct m as [[t0 v0] [t1 v1]].
    rewrite /latest /stale /write_stale /latest_is1 /get_slot /set_slot /=.
    repeat case_bool_decide; simpl in *; try done; lia.
  Qed.

  Lemma call_abs m v local t :
    sts (latest m) < t →
    abs (call m v local t).1 = (acall (abs m) v local t).1 ∧
    (call m v local t).2 = (acall (abs m) v local t).2.
  Proof.
    intros Ht. rewrite /call /acall /abs /=.
    destruct (decide _); simpl; [done|].
    rewrite latest_write_fresh //.
  Qed.

  Lemma crashed_call_abs m v local t c :
    sts (latest m) < t →
    abs (crashed_call m v local t c) = acrash (abs m) v local t c.
  Proof.
    intros Ht. rewrite /crashed_call /acrash /abs /=.
    destruct (decide _); [done|]. destruct c.
    - rewrite latest_write_torn //.
    - rewrite latest_write_fresh //.
  Qed.

  Lemma call_latest_ts m v local t :
    sts (latest m) < t → sts (latest (call m v local t).1) ≤ t.
  Proof.
    intros Ht. rewrite /call. destruct (decide _); simpl; [lia|].
    rewrite latest_write_fresh //.
  Qed.

  Lemma crashed_call_latest_ts m v local t c :
    sts (latest m) < t → sts (latest (crashed_call m v local t c)) ≤ t.
  Proof.
    intros Ht. rewrite /crashed_call. destruct (decide _); [lia|].
    destruct c; [rewrite latest_write_torn; lia|rewrite latest_write_fresh //].
  Qed.

  Lemma ts_fresh_cons m e tr m' :
    ts_fresh m (e :: tr) → sts (latest m') ≤ ev_ts e → ts_fresh m' tr.
  Proof.
    intros [Hf Hs] Hle. apply StronglySorted_inv in Hs as [Hs Hall].
    split; [|done]. eapply Forall_impl; [exact Hall|]. simpl; lia.
  Qed.

  (** ** The refinement *)
  Theorem run_refines m tr :
    ts_fresh m tr →
    abs (run m tr).1 = (arun (abs m) tr).1 ∧ (run m tr).2 = (arun (abs m) tr).2.
  Proof.
    revert m. induction tr as [|e tr IH]; intros m Hf; [done|].
    pose proof Hf as [Hfe _]. apply Forall_inv in Hfe.
    destruct e as [v local t|v local t c]; simpl in *.
    - destruct (call_abs m v local t Hfe) as [Habs Hret].
      pose proof (call_latest_ts m v local t Hfe) as Hle.
      destruct (call m v local t) as [m1 r] eqn:Hc.
      destruct (acall (abs m) v local t) as [a1 r'] eqn:Hac. simpl in *. subst r'.
      destruct (IH m1) as [IH1 IH2]; [by eapply ts_fresh_cons|].
      rewrite Habs in IH1 IH2.
      destruct (run m1 tr) as [m2 rs], (arun a1 tr) as [a2 rs']. simpl in *.
      by subst.
    - rewrite -crashed_call_abs //. apply IH.
      eapply ts_fresh_cons; [done|]. by apply crashed_call_latest_ts.
  Qed.

  (** ** Consequences *)

  (** The arguments of the calls that took effect, in the atomic cell. *)
  Fixpoint effective_values (a : nat * V) (tr : list event) : list V :=
    match tr with
    | [] => []
    | Call v local t :: tr' =>
        (if decide (local < a.1) then [] else [v]) ++
        effective_values (acall a v local t).1 tr'
    | CrashedCall v local t c :: tr' =>
        (if decide (local < a.1) then [] else
           match c with CutAfterTs => [v] | CutBeforeTs _ => [] end) ++
        effective_values (acrash a v local t c) tr'
    end.

  Lemma arun_values a tr :
    ∀ r, r ∈ (arun a tr).2 ∨ r = (arun a tr).1.2 → r = a.2 ∨ r ∈ effective_values a tr.
  Proof.
    revert a. induction tr as [|e tr IH]; intros a r Hr; simpl in *.
    { destruct Hr as [Hr|Hr]; [set_solver|subst r; by left]. }
    destruct e as [v local t|v local t c].
    - rewrite /acall in Hr |- *. destruct (decide (local < a.1)); simpl in *.
      + destruct (arun a tr) as [a2 rs] eqn:Ha. simpl in Hr.
        destruct Hr as [Hr|Hr]; [apply elem_of_cons in Hr as [->|Hr]; [by left|]|].
        * apply IH. by rewrite Ha; left.
        * apply IH. by rewrite Ha; right.
      + destruct (arun (t, v) tr) as [a2 rs] eqn:Ha. simpl in Hr.
        destruct Hr as [Hr|Hr]; [apply elem_of_cons in Hr as [->|Hr]; [set_solver|]|].
        * destruct (IH (t, v) r) as [->|?]; [by rewrite Ha; left|set_solver|set_solver].
        * destruct (IH (t, v) r) as [->|?]; [by rewrite Ha; right|set_solver|set_solver].
    - rewrite /acrash in Hr |- *. destruct (decide (local < a.1)); simpl in *.
      + by apply IH.
      + destruct c as [torn|].
        * by apply IH.
        * destruct (IH (t, v) r Hr) as [->|?]; set_solver.
  Qed.

  (** Never a torn value: every value a call returns is the initial value or
      the argument of a call that took effect. *)
  Theorem returned_value_not_torn m tr r :
    ts_fresh m tr →
    r ∈ (run m tr).2 → r = sval (latest m) ∨ r ∈ effective_values (abs m) tr.
  Proof.
    intros Hf Hr. destruct (run_refines m tr Hf) as [_ Hret].
    rewrite Hret in Hr. apply (arun_values (abs m) tr r). by left.
  Qed.

  (** Recovery returns the last checkpoint whose timestamp persisted: after
      any trace, a call whose [LOCAL] is below that checkpoint's timestamp
      (the re-execution of the same call, by the replay discipline) returns
      its value -- the cell's value, i.e. the last completed checkpoint or
      the in-flight one whose timestamp persisted. *)
  Theorem recovery_returns_last_checkpoint m tr v local t :
    ts_fresh m (tr ++ [Call v local t]) →
    local < (arun (abs m) tr).1.1 →
    last (run m (tr ++ [Call v local t])).2 = Some (arun (abs m) tr).1.2.
  Proof.
    intros Hf Hlt. destruct (run_refines m _ Hf) as [_ ->]. clear Hf.
    revert Hlt. generalize (abs m) as a. clear m.
    induction tr as [|e tr IH]; intros a Hlt; simpl in *.
    { rewrite /acall. by destruct (decide _). }
    destruct e as [v' local' t'|v' local' t' c].
    - destruct (acall a v' local' t') as [a1 r] eqn:Ha1.
      specialize (IH a1). destruct (arun a1 (tr ++ _)) as [a2 rs] eqn:Ha2.
      destruct (arun a1 tr) as [a3 rs3] eqn:Ha3. simpl in *.
      specialize (IH Hlt). rewrite last_cons IH. done.
    - by apply IH.
  Qed.

  (** The crashed re-executions that do not persist a newer timestamp. *)
  Definition no_new_ts (e : event) : Prop :=
    match e with CrashedCall _ _ _ (CutBeforeTs _) => True | _ => False end.

  (** A completed checkpoint is never lost: after it, any number of crashes
      that cut the re-execution before its timestamp persisted (any torn
      value), and then the re-execution with [LOCAL < t] returns [v]. *)
  Theorem completed_checkpoint_survives_crashes m tr1 v local t crashes v' local' t' :
    ts_fresh m (tr1 ++ Call v local t :: crashes ++ [Call v' local' t']) →
    ¬ local < (arun (abs m) tr1).1.1 →
    Forall no_new_ts crashes →
    local' < t →
    last (run m (tr1 ++ Call v local t :: crashes ++ [Call v' local' t'])).2 = Some v.
  Proof.
    intros Hf Hnot Hcr Hlt. rewrite app_comm_cons app_assoc in Hf |- *.
    assert (Hcell : ∀ a, ¬ local < a.1 →
              (arun a (Call v local t :: crashes)).1 = (t, v)).
    { intros a Ha. simpl. rewrite /acall. destruct (decide _); [done|]. simpl.
      clear -Hcr. induction Hcr as [|e crashes He _ IH]; [done|].
      destruct e as [? ? ?|? ? ? []]; try done. simpl. rewrite /acrash.
      by destruct (decide _). }
    assert (Hsplit : ∀ a, (arun a (tr1 ++ Call v local t :: crashes)).1 =
                          (arun (arun a tr1).1 (Call v local t :: crashes)).1).
    { clear. generalize (Call v local t :: crashes) as tr2. intros tr2 a.
      revert a. induction tr1 as [|e tr1 IH]; intros a; [done|].
      destruct e as [v' local' t'|]; simpl; [|apply IH].
      destruct (acall a v' local' t') as [a1 r]. specialize (IH a1).
      destruct (arun a1 (tr1 ++ tr2)) as [x xs], (arun a1 tr1) as [y ys].
      simpl in *. done. }
    rewrite (recovery_returns_last_checkpoint m _ v' local' t' Hf).
    - by rewrite Hsplit Hcell.
    - by rewrite Hsplit Hcell.
  Qed.

  (** The latest timestamp never decreases. *)
  Lemma arun_ts_monotone a tr :
    Forall (λ e, a.1 < ev_ts e) tr →
    StronglySorted (λ e1 e2, ev_ts e1 < ev_ts e2) tr →
    a.1 ≤ (arun a tr).1.1.
  Proof.
    revert a. induction tr as [|e tr IH]; intros a Hfr Hs; simpl; [lia|].
    apply Forall_cons in Hfr as [He Hfr]. apply StronglySorted_inv in Hs as [Hs Hall].
    destruct e as [v local t|v local t c]; simpl in *.
    - rewrite /acall. destruct (decide _) as [|Hn]; simpl.
      + destruct (arun a tr) as [a2 rs] eqn:Ha. simpl.
        by rewrite -(f_equal (λ p, p.1.1) Ha); apply IH.
      + destruct (arun (t, v) tr) as [a2 rs] eqn:Ha. simpl.
        etrans; [|by rewrite -(f_equal (λ p, p.1.1) Ha); apply IH]. simpl; lia.
    - rewrite /acrash. destruct (decide _); [by apply IH|].
      destruct c; [by apply IH|].
      etrans; [|apply IH; done]. simpl; lia.
  Qed.

  Theorem latest_ts_monotone m tr :
    ts_fresh m tr → sts (latest m) ≤ sts (latest (run m tr).1).
  Proof.
    intros Hf. destruct (run_refines m tr Hf) as [Habs _].
    change (sts (latest (run m tr).1)) with (abs (run m tr).1).1.
    rewrite Habs. destruct Hf as [Hfr Hs].
    change (sts (latest m)) with (abs m).1 in Hfr |- *. by apply arun_ts_monotone.
  Qed.
End checkpoint.

(** ** The other order loses: the timestamp persisted before the value

    If the timestamp store could persist before the value store (different
    lines and no flush in between), a crash could leave the new timestamp
    over a torn value, and the re-execution would return the torn value. *)
Definition crashed_call_ts_first {V} (m : @memento V) (local t : nat) (torn : V) : memento :=
  if decide (local < sts (latest m)) then m else write_stale m (Slot t torn).

Lemma ts_first_returns_torn :
  let m0 := Mmt (Slot 0 0) (Slot 0 0) in
  let m1 := crashed_call_ts_first m0 0 5 42 in   (* CHECKPOINT(7) cut: ts 5 over torn 42 *)
  (call m1 7 0 6).2 = 42.
Proof. vm_compute. reflexivity. Qed.
