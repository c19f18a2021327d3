(** * The heap's pop of a slot's own stack, across a crash

    Justifies step 2 of [specs/alloc/Heap.tla] (actions [PopOwn],
    [PopOwnFence], the fix-up [FixUpSlot] applied by [Crash], and the lazy
    [Recover]) and the corresponding code of [impl/perdure-pm/src/heap.rs]
    ([HeapThread::refill] and [HeapThread::recover]).

    The persistent state of one slot, for one size class, is one cache line
    with [alloc_state = (alloc_set, alloc_idx)] and [sets_head]; the slot's
    stack is the list of sets reached from [sets_head] through the sets'
    [link] words ([chain]).  Popping the stack is two stores to that line,
    [alloc_state := (top, 0)] then [sets_head := link top]; Px86 persists the
    stores of one line in order, so a crash keeps a prefix of them
    ([crash_image]).  Recovery's fix-up pops once more if [sets_head] is the
    alloc set.

    Proved, for every crash prefix, starting from a well-formed slot (the
    stack is a chain without repetition, and does not contain the alloc set):
    - [pop_crash_fixup_wf]: after crash + fix-up the slot is well formed
      again; in particular no set is both the alloc set and on the stack;
    - [pop_crash_fixup_no_loss]: every set on the stack before the pop is,
      after crash + fix-up, the alloc set or still on the stack (and no other
      set appeared);
    - [fixup_wf_id], [fixup_idempotent]: the fix-up changes nothing on a
      well-formed slot, so running it again (after a crash during recovery,
      or on a slot that was not in the middle of a pop) is harmless;
    - [push_wf], [donate_pop_wf]: completing a set (step 5) and taking the
      top set off for donation (step 6) keep the slot well formed.
    And the three ways to get it wrong that the TLA+ mutants show
    (specs/alloc/mutants/): [swapped_pop_loses_set] (the stores in the other
    order lose a set), [no_fixup_duplicates] (without the fix-up the alloc
    set stays on the stack: it would be handed out twice), and
    [push_before_fixup_duplicates] (completing a set before the fix-up hides
    the intermediate state from the fix-up: the fix-up must precede every use
    of the slot, not only the first alloc).

    Not covered here (the TLA+ model covers it, by model checking on small
    bounds): other threads, the global stack, the bump chunk, the objects in
    the sets and the allocation index, the durability of the arrays' contents
    (assumed: a set's [link] is durable before the set is on a stack), and
    the Px86 rules beyond "one line persists a prefix of its stores". *)
From stdpp Require Import base list decidable.
From Coq Require Import Lia.

(** Set ids are array addresses; [0] means none. *)
Record slot_line := SlotLine { alloc_set : nat; alloc_idx : nat; sets_head : nat }.

(** A store to the slot line. *)
Inductive store := StAlloc (s i : nat) | StHead (h : nat).

Definition apply_store (l : slot_line) (st : store) : slot_line :=
  match st with
  | StAlloc s i => SlotLine s i (sets_head l)
  | StHead h => SlotLine (alloc_set l) (alloc_idx l) h
  end.

(** The line after some stores persisted, in order. *)
Definition persist (l : slot_line) (sts : list store) : slot_line := foldl apply_store l sts.

(** A crash keeps a prefix of the line's stores: the first [n]. *)
Definition crash_image (l : slot_line) (sts : list store) (n : nat) : slot_line :=
  persist l (take n sts).

Section pop.
  (** The sets' [link] words (durable and unchanged by a pop). *)
  Context (link : nat -> nat).

  (** [chain h stk]: following links from [h] visits exactly [stk], then 0. *)
  Inductive chain : nat -> list nat -> Prop :=
  | chain_nil : chain 0 []
  | chain_cons h stk : h <> 0 -> chain (link h) stk -> chain h (h :: stk).

  Lemma chain_unique h stk1 stk2 : chain h stk1 -> chain h stk2 -> stk1 = stk2.
  Proof.
    intros H1. revert stk2. induction H1 as [| h stk Hh _ IH]; intros stk2 H2;
      inversion H2; subst; try congruence.
    f_equal. by apply IH.
  Qed.

  Lemma chain_not_zero h stk : chain h stk -> 0 ∉ stk.
  Proof.
    induction 1 as [| h stk Hh _ IH].
    - apply not_elem_of_nil.
    - rewrite elem_of_cons. intros [Heq | ?]; [congruence | auto].
  Qed.

  Lemma chain_cons_inv h top rest :
    chain h (top :: rest) -> h = top /\ top <> 0 /\ chain (link top) rest.
  Proof. inversion 1; subst; auto. Qed.

  Lemma chain_head h stk : chain h stk -> h <> 0 -> h ∈ stk.
  Proof. intros Hc Hnz. destruct Hc; [congruence | left]. Qed.

  (** A well-formed slot: its stack is [stk], without repetition, and the
      alloc set is not on it. *)
  Definition slot_wf (l : slot_line) (stk : list nat) : Prop :=
    chain (sets_head l) stk /\ NoDup stk /\ alloc_set l ∉ stk.

  (** Step 2: [alloc_state := (top, 0)], then [sets_head := link top]. *)
  Definition pop_stores (l : slot_line) : list store :=
    [StAlloc (sets_head l) 0; StHead (link (sets_head l))].

  (** Step 2's recovery fix-up. *)
  Definition fixup (l : slot_line) : slot_line :=
    if decide (alloc_set l <> 0 /\ sets_head l = alloc_set l)
    then SlotLine (alloc_set l) (alloc_idx l) (link (sets_head l)) else l.

  Lemma fixup_wf_id l stk : slot_wf l stk -> fixup l = l.
  Proof.
    intros (Hc & _ & Hnot). unfold fixup.
    case_decide as Hd; [| done].
    destruct Hd as [Hnz Heq]. exfalso. apply Hnot.
    rewrite <- Heq. apply (chain_head _ _ Hc). congruence.
  Qed.

  (** A pop ends in this state when both stores persist. *)
  Lemma pop_done_wf l top rest :
    chain (sets_head l) (top :: rest) -> NoDup (top :: rest) ->
    slot_wf (SlotLine top 0 (link top)) rest.
  Proof.
    intros Hc Hnd. apply chain_cons_inv in Hc as (_ & _ & Hrest).
    apply stdpp.list.NoDup_cons in Hnd as [Htop Hnd].
    split_and!; simpl; done.
  Qed.

  Theorem pop_crash_fixup l stk n :
    slot_wf l stk -> sets_head l <> 0 ->
    exists stk',
      slot_wf (fixup (crash_image l (pop_stores l) n)) stk' /\
      (forall s, s ∈ stk -> s = alloc_set (fixup (crash_image l (pop_stores l) n)) \/ s ∈ stk') /\
      (forall s, s ∈ stk' -> s ∈ stk).
  Proof.
    intros Hwf Hnz. pose proof Hwf as (Hc & Hnd & Hnot).
    destruct stk as [| top rest]; [inversion Hc; congruence |].
    assert (sets_head l = top) as Etop by (apply chain_cons_inv in Hc; naive_solver).
    pose proof (pop_done_wf l top rest Hc Hnd) as Hdone.
    destruct n as [| [| n]]; unfold crash_image, pop_stores; simpl.
    - (* nothing persisted: the fix-up does nothing *)
      exists (top :: rest). rewrite (fixup_wf_id l _ Hwf). naive_solver.
    - (* only alloc_state persisted: the fix-up completes the pop *)
      exists rest. rewrite Etop. unfold fixup. simpl.
      rewrite decide_True by (split; [congruence | done]).
      split; [done |]. split.
      + intros s. rewrite elem_of_cons. naive_solver.
      + intros s Hs. by right.
    - (* both persisted: the pop is complete, the fix-up does nothing *)
      exists rest. rewrite Etop, take_nil. simpl. rewrite (fixup_wf_id _ _ Hdone).
      split; [done |]. split.
      + intros s. rewrite elem_of_cons. naive_solver.
      + intros s Hs. by right.
  Qed.

  (** The two facts asked for, as separate statements. *)
  Corollary pop_crash_fixup_wf l stk n :
    slot_wf l stk -> sets_head l <> 0 ->
    exists stk', slot_wf (fixup (crash_image l (pop_stores l) n)) stk'.
  Proof. intros H1 H2. destruct (pop_crash_fixup l stk n H1 H2) as (stk' & ? & _). eauto. Qed.

  Corollary pop_crash_fixup_exclusive l stk n stk' :
    slot_wf l stk -> sets_head l <> 0 ->
    chain (sets_head (fixup (crash_image l (pop_stores l) n))) stk' ->
    alloc_set (fixup (crash_image l (pop_stores l) n)) ∉ stk'.
  Proof.
    intros H1 H2 Hc. destruct (pop_crash_fixup l stk n H1 H2) as (stk'' & (Hc' & _ & Hnot) & _).
    by rewrite (chain_unique _ _ _ Hc Hc').
  Qed.

  Corollary pop_crash_fixup_no_loss l stk n stk' s :
    slot_wf l stk -> sets_head l <> 0 ->
    chain (sets_head (fixup (crash_image l (pop_stores l) n))) stk' ->
    s ∈ stk -> s = alloc_set (fixup (crash_image l (pop_stores l) n)) \/ s ∈ stk'.
  Proof.
    intros H1 H2 Hc Hs. destruct (pop_crash_fixup l stk n H1 H2) as (stk'' & (Hc' & _) & Hkeep & _).
    rewrite (chain_unique _ _ _ Hc Hc'). by apply Hkeep.
  Qed.

  Lemma fixup_idempotent l stk : slot_wf (fixup l) stk -> fixup (fixup l) = fixup l.
  Proof. apply fixup_wf_id. Qed.

  (** Step 6, first part: [sets_head := link top] (the set then leaves the
      slot; a crash before it is pushed on the global stack leaks it). *)
  Lemma donate_pop_wf l top rest :
    slot_wf l (top :: rest) ->
    slot_wf (SlotLine (alloc_set l) (alloc_idx l) (link top)) rest.
  Proof.
    intros (Hc & Hnd & Hnot). apply chain_cons_inv in Hc as (_ & _ & Hrest).
    apply stdpp.list.NoDup_cons in Hnd as [_ Hnd].
    split_and!; simpl; [done | done |].
    intros Hin. apply Hnot. by right.
  Qed.
End pop.

(** Step 5: completing a set [a] writes [link a := sets_head] (durably), then
    [sets_head := a]; [a] is a reused spare or a new array: neither on the
    stack nor the alloc set. *)
Definition set_link (link : nat -> nat) (a v : nat) : nat -> nat :=
  fun s => if decide (s = a) then v else link s.

Lemma chain_set_link link a v h stk :
  a ∉ stk -> chain link h stk -> chain (set_link link a v) h stk.
Proof.
  intros Ha Hc. induction Hc as [| h stk Hh Hrest IH]; constructor; [done |].
  assert (set_link link a v h = link h) as ->.
  { unfold set_link. rewrite decide_False; [done |]. intros ->. apply Ha. left. }
  apply IH. intros ?. apply Ha. by right.
Qed.

Lemma push_wf link l stk a :
  slot_wf link l stk -> a <> 0 -> a ∉ stk -> a <> alloc_set l ->
  slot_wf (set_link link a (sets_head l)) (SlotLine (alloc_set l) (alloc_idx l) a) (a :: stk).
Proof.
  intros (Hc & Hnd & Hnot) Ha Hstk Halloc.
  split_and!; simpl.
  - constructor; [done |].
    assert (set_link link a (sets_head l) a = sets_head l) as ->.
    { unfold set_link. by rewrite decide_True. }
    by apply chain_set_link.
  - by constructor.
  - rewrite elem_of_cons. intros [Heq | ?]; [congruence | auto].
Qed.

(** ** What goes wrong otherwise (the mutants of specs/alloc/mutants/) *)

(** One set [1] on the stack, no alloc set. *)
Definition ex_link : nat -> nat := fun _ => 0.
Definition ex_slot : slot_line := SlotLine 0 0 1.

Lemma ex_slot_wf : slot_wf ex_link ex_slot [1].
Proof.
  split_and!; simpl.
  - constructor; [lia | constructor].
  - repeat constructor. apply not_elem_of_nil.
  - rewrite elem_of_list_singleton. lia.
Qed.

(** Storing [sets_head] first: a crash that keeps only that store loses the
    set ([mutants/PopOrderSwapped.cfg]). *)
Definition pop_stores_swapped (link : nat -> nat) (l : slot_line) : list store :=
  [StHead (link (sets_head l)); StAlloc (sets_head l) 0].

Lemma swapped_pop_loses_set :
  let l' := fixup ex_link (crash_image ex_slot (pop_stores_swapped ex_link ex_slot) 1) in
  alloc_set l' <> 1 /\ forall stk', chain ex_link (sets_head l') stk' -> 1 ∉ stk'.
Proof.
  simpl. unfold fixup. simpl.
  split; [lia |]. intros stk' Hc. unfold ex_link in Hc.
  inversion Hc; [apply not_elem_of_nil | lia].
Qed.

(** Without the fix-up, a crash that keeps only the first store leaves the
    alloc set on the stack: once exhausted it is popped and handed out again
    ([mutants/NoFixUp.cfg]). *)
Lemma no_fixup_duplicates :
  let l' := crash_image ex_slot (pop_stores ex_link ex_slot) 1 in
  chain ex_link (sets_head l') [1] /\ alloc_set l' = 1.
Proof. simpl. split; [constructor; [lia | constructor] | done]. Qed.

(** Completing a set [2] before the fix-up ran: the new set's link is the
    alloc set, [sets_head] is no longer the alloc set, so the fix-up does not
    fire and the alloc set stays on the stack below [2]
    ([mutants/LazyFixUp.cfg]; donating the top set before the fix-up is the
    same mistake). *)
Lemma push_before_fixup_duplicates :
  let l1 := crash_image ex_slot (pop_stores ex_link ex_slot) 1 in
  let link2 := set_link ex_link 2 (sets_head l1) in
  let l2 := fixup link2 (SlotLine (alloc_set l1) (alloc_idx l1) 2) in
  chain link2 (sets_head l2) [2; 1] /\ alloc_set l2 = 1.
Proof.
  simpl. unfold fixup. simpl.
  split; [| done].
  constructor; [lia |]. unfold set_link at 2. simpl.
  constructor; [lia |]. unfold set_link. simpl. constructor.
Qed.
