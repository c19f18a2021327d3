(** * RELAX's tracking mechanisms: Claim 1 for the five variants

    Claim 1 of the thesis (Chapter 7): whenever the tracking mechanism is
    asked whether a field (or a node) has been recovered since the most
    recent crash, it answers yes only if some [recover_field]
    ([recover_node]) on that field (node) returned since that crash.  The
    thesis leaves the case analysis out; here it is, for each tracking
    variant of §6.4 (the thesis's [BitsetAtomic],
    [MarkableAtomicPointer], [HybridAtomicPointer],
    [ZMarkableAtomicPointer], [PseudoBitsetAtomic]; in
    [impl/perdure-relax/src/space.rs] the [Tracking] variants [Bitset],
    [Markable], [Hybrid], [ZMarkable], [PseudoBitset]).

    The model ([step]), for any number of threads and objects (fields or
    nodes, numbered) and any number of crashes.  The part every variant
    shares ([ghost]): [ret o], a recover call on [o] returned since the
    last crash; [fresh o], [o] was allocated (and initialised in both
    replicas) since the last crash; each thread's program counter: idle,
    inside a recover call on [o] ([TRec o]), returned from it and not yet
    done updating the tracking state ([TDone o]), or using [o] after
    finding it recovered or allocating it ([THold o]).  The steps: call and
    return of a recover call (the return may update the tracking state:
    [on_return]), allocation ([on_alloc]), a load that finds [o] recovered
    ([query] answers yes) and goes on to use it, the variant's own tracking
    steps ([tstep]), and a crash (threads die, the ghost is reset, the
    tracking state becomes any state the variant allows after a crash:
    [crashed]).  The ghost is read by no guard.

    The variants (tracking state / after a crash / query / steps):
    - [bitset] (§6.4.1): the markbit table as an array with O(1)
      initialisation: values [aV], the "from" and "to" arrays [aF], [aT]
      and the count [atop]; a cell is initialised iff
      [aF i < atop ∧ aT (aF i) = i], reads as 0 otherwise.  After a crash
      [aV], [aF], [aT] are arbitrary garbage and [atop = 0].  Query: the
      cell reads 1.  Set after the recover call returned (and for fresh
      objects).  (A sequential array; the concurrent Jayanti–Shun array is
      taken to be linearizable to it.)
    - [markable] (§6.4.2, Algorithms 6.3 and 6.4): the DRAM replica of the
      single pointer to each node: not yet recovered ([None]: garbage never
      read, because the node holding the pointer is not recovered), marked,
      or unmarked.  Query: the pointer is unmarked.  Steps: recovering the
      pointer field (Algorithm 6.3 line 4 writes it marked, at any time,
      also again after it was unmarked), unmarking by the thread whose
      [recover_node] returned (Algorithm 6.4 line 2.3, a DWCAS from the
      marked pointer), storing an unmarked pointer to a node the thread
      holds (a Mirror CAS of the data structure).
    - [hybrid] (§6.4.3): [markable]'s pointers plus a per-node [bitset]
      table.  Query: the pointer is unmarked or the node's bit reads 1.
      Steps: [markable]'s, setting the bit after [recover_node] returned,
      and unmarking a marked pointer whose node's bit reads 1 (the load
      that finds the node recovered through another pointer; bit read and
      DWCAS as one step, which is sound because a set bit stays set until
      the next crash, which ends the load too).
    - [zmarkable] (§6.4.4): DRAM zeroed by mmap after a crash; the
      sequence word of each field's DRAM pair.  Query: it is non-zero.  The
      recover call's last step (Algorithm 6.2 line 5) writes the NVMM pair
      (any sequence number) or writes nothing (line 3); a Mirror write by a
      thread holding the field increments it (mod 2^64; a wrap to 0 only
      makes the query answer no).  The pointers' marks are a hint for
      which nodes to visit; the answer is the field's.
    - [pseudo_bitset] (§6.4.5): DRAM zeroed; the sequence word's MSB
      (2^63) is the recovered bit.  Query: the MSB is set.  Line 5 writes
      the NVMM sequence with the MSB set; a Mirror write increments the low
      63 bits and keeps the MSB.

    Proved ([claim1_bitset], [claim1_markable], [claim1_hybrid],
    [claim1_zmarkable], [claim1_pseudo_bitset], both from [claim1_word]): in every reachable state,
    if the query answers yes for [o] then [ret o ∨ fresh o]: a recover call
    on [o] returned since the last crash, or [o] was created since then
    (and so needs no recovery; the thesis's claim is about objects that
    existed at the crash).  The generic part ([tracking_sound]) reduces
    each to a tracking invariant ([vinv]) kept by the variant's steps.

    Not covered: what a recover call does to the replicas (that is
    [Relax/RecoverField.v]); which objects a data structure queries and in
    which order (the traversal from the roots, §6.6); the concurrent O(1)
    initialisation array's own algorithm; pointer values (only whether the
    replica of the pointer to a node is marked); performance (cascading
    re-marking in [markable] with several incoming pointers is allowed
    here: re-marking only makes the query answer no). *)
From Coq Require Import Arith ZArith Lia Bool.

(** ** The part every variant shares *)
Inductive tpc : Type :=
| TIdle
| TRec (o : nat)     (* inside recover_field / recover_node on o *)
| TDone (o : nat)    (* returned from it, tracking not yet updated *)
| THold (o : nat).   (* using o: found it recovered, or allocated it *)

Record ghost : Type := G { ret : nat -> bool; fresh : nat -> bool; pc : nat -> tpc }.

Definition bset (f : nat -> bool) (o : nat) : nat -> bool :=
  fun i => if Nat.eqb i o then true else f i.

Definition fset {A} (f : nat -> A) (o : nat) (a : A) : nat -> A :=
  fun i => if Nat.eqb i o then a else f i.

Lemma fset_same {A} (f : nat -> A) o a : fset f o a o = a.
Proof. unfold fset. rewrite Nat.eqb_refl. reflexivity. Qed.

Lemma fset_other {A} (f : nat -> A) o a i : i <> o -> fset f o a i = f i.
Proof. intros H. unfold fset. apply Nat.eqb_neq in H. rewrite H. reflexivity. Qed.

Record variant : Type := Variant {
  tstate : Type;
  crashed : tstate -> Prop;
  query : tstate -> nat -> bool;
  on_return : nat -> tstate -> tstate -> Prop;
  on_alloc : nat -> tstate -> tstate -> Prop;
  tstep : tpc -> tstate -> tpc -> tstate -> Prop
}.

Section generic.
  Context (V : variant).

  Definition cstate : Type := (ghost * tstate V)%type.

  Inductive step : cstate -> cstate -> Prop :=
  | st_call g x t o :
      pc g t = TIdle ->
      step (g, x) (G (ret g) (fresh g) (fset (pc g) t (TRec o)), x)
  | st_return g x x' t o :
      pc g t = TRec o -> on_return V o x x' ->
      step (g, x) (G (bset (ret g) o) (fresh g) (fset (pc g) t (TDone o)), x')
  | st_alloc g x x' t o :
      pc g t = TIdle -> on_alloc V o x x' ->
      step (g, x) (G (ret g) (bset (fresh g) o) (fset (pc g) t (THold o)), x')
  | st_load g x t o :
      pc g t = TIdle -> query V x o = true ->
      step (g, x) (G (ret g) (fresh g) (fset (pc g) t (THold o)), x)
  | st_track g x x' t p' :
      tstep V (pc g t) x p' x' ->
      step (g, x) (G (ret g) (fresh g) (fset (pc g) t p'), x')
  | st_crash g x x' :
      crashed V x' ->
      step (g, x) (G (fun _ => false) (fun _ => false) (fun _ => TIdle), x').

  Inductive reachable : cstate -> Prop :=
  | reach_init x : crashed V x -> reachable (G (fun _ => false) (fun _ => false) (fun _ => TIdle), x)
  | reach_step s s' : reachable s -> step s s' -> reachable s'.

  (** [o] is recovered (a recover call on it returned) or fresh. *)
  Definition rf (g : ghost) (o : nat) : Prop := ret g o = true \/ fresh g o = true.

  Definition pcs_ok (g : ghost) : Prop :=
    forall t o, (pc g t = TDone o -> ret g o = true) /\ (pc g t = THold o -> rf g o).

  (** What a variant must show: an invariant of its tracking state, over
      the set of recovered-or-fresh objects, that holds after a crash,
      makes a yes answer sound, survives that set growing, and is kept by
      returns, allocations and the variant's steps. *)
  Record sound (vinv : (nat -> Prop) -> tstate V -> Prop) : Prop := Sound {
    s_crash : forall x, crashed V x -> vinv (fun _ => False) x;
    s_query : forall R x o, vinv R x -> query V x o = true -> R o;
    s_mono : forall (R R' : nat -> Prop) x, (forall o, R o -> R' o) -> vinv R x -> vinv R' x;
    s_return : forall (R : nat -> Prop) x x' o, vinv R x -> R o -> on_return V o x x' -> vinv R x';
    s_alloc : forall (R : nat -> Prop) x x' o, vinv R x -> R o -> on_alloc V o x x' -> vinv R x';
    s_track : forall (R : nat -> Prop) x x' p p', vinv R x ->
      (forall o, p = TDone o -> R o) -> (forall o, p = THold o -> R o) ->
      tstep V p x p' x' ->
      vinv R x' /\ (forall o, p' = TDone o -> p = TDone o) /\
      (forall o, p' = THold o -> p = THold o)
  }.

  Lemma rf_bset_ret g o i : rf g i -> rf (G (bset (ret g) o) (fresh g) (pc g)) i.
  Proof.
    unfold rf, bset. simpl. intros [H|H]; [left|right; exact H].
    destruct (Nat.eqb i o); [reflexivity|exact H].
  Qed.

  Theorem tracking_sound vinv :
    sound vinv -> forall s, reachable s -> pcs_ok (fst s) /\ vinv (rf (fst s)) (snd s).
  Proof.
    intros Hs s Hr. induction Hr as [x Hx|s s' _ IH Hst].
    - split.
      + intros t o. simpl. split; discriminate.
      + simpl. apply (s_mono _ Hs (fun _ => False)); [unfold rf; simpl; tauto|].
        exact (s_crash _ Hs x Hx).
    - destruct IH as (Hpc & Hv). destruct Hst as [g x t o Ht|g x x' t o Ht Hret|g x x' t o Ht Hal
        |g x t o Ht Hq|g x x' t p' Htr|g x x' Hc]; simpl in *.
      + split; [|exact Hv]. intros t' o'. simpl.
        destruct (Nat.eq_dec t' t) as [->|Hne]; [rewrite fset_same; split; discriminate|].
        rewrite fset_other by exact Hne. exact (Hpc t' o').
      + split.
        * intros t' o'. simpl. destruct (Nat.eq_dec t' t) as [->|Hne].
          -- rewrite fset_same. split; [intros [= <-]|discriminate]. unfold bset. rewrite Nat.eqb_refl. reflexivity.
          -- rewrite fset_other by exact Hne. destruct (Hpc t' o') as (H1 & H2). split.
             ++ intros H. unfold bset. rewrite H1 by exact H. destruct (Nat.eqb o' o); reflexivity.
             ++ intros H. apply rf_bset_ret. exact (H2 H).
        * apply (s_return _ Hs _ x x' o); [|left; unfold bset; simpl; rewrite Nat.eqb_refl; reflexivity|exact Hret].
          apply (s_mono _ Hs (rf g)); [|exact Hv]. intros i Hi. apply (rf_bset_ret g o i Hi).
      + assert (Hmono : forall i, rf g i -> rf (G (ret g) (bset (fresh g) o) (fset (pc g) t (THold o))) i).
        { unfold rf, bset. simpl. intros i [H|H]; [left; exact H|right].
          destruct (Nat.eqb i o); [reflexivity|exact H]. }
        assert (Ho : rf (G (ret g) (bset (fresh g) o) (fset (pc g) t (THold o))) o).
        { right. simpl. unfold bset. rewrite Nat.eqb_refl. reflexivity. }
        split.
        * intros t' o'. simpl. destruct (Nat.eq_dec t' t) as [->|Hne].
          -- rewrite fset_same. split; [discriminate|intros [= <-]; exact Ho].
          -- rewrite fset_other by exact Hne. destruct (Hpc t' o') as (H1 & H2). split; [exact H1|].
             intros H. apply Hmono. exact (H2 H).
        * apply (s_alloc _ Hs _ x x' o); [|exact Ho|exact Hal].
          apply (s_mono _ Hs (rf g)); [exact Hmono|exact Hv].
      + split; [|exact Hv]. intros t' o'. simpl.
        destruct (Nat.eq_dec t' t) as [->|Hne].
        * rewrite fset_same. split; [discriminate|intros [= <-]]. exact (s_query _ Hs _ x o Hv Hq).
        * rewrite fset_other by exact Hne. exact (Hpc t' o').
      + destruct (s_track _ Hs (rf g) x x' (pc g t) p' Hv) as (Hv' & Hd & Hh); [| |exact Htr|].
        * intros o Ho. left. exact (proj1 (Hpc t o) Ho).
        * intros o Ho. apply (proj2 (Hpc t o)). exact Ho.
        * split; [|exact Hv'].
          intros t' o'. simpl. destruct (Nat.eq_dec t' t) as [->|Hne].
          -- rewrite fset_same. split.
             ++ intros H. apply (proj1 (Hpc t o')). exact (Hd o' H).
             ++ intros H. apply (proj2 (Hpc t o')). exact (Hh o' H).
          -- rewrite fset_other by exact Hne. exact (Hpc t' o').
      + split.
        * intros t o. simpl. split; discriminate.
        * apply (s_mono _ Hs (fun _ => False)); [unfold rf; simpl; tauto|].
          exact (s_crash _ Hs x' Hc).
  Qed.

  Corollary query_sound vinv :
    sound vinv -> forall g x o, reachable (g, x) -> query V x o = true -> rf g o.
  Proof.
    intros Hs g x o Hr Hq. destruct (tracking_sound vinv Hs (g, x) Hr) as (_ & Hv).
    exact (s_query _ Hs _ x o Hv Hq).
  Qed.
End generic.

(** ** The markbit table: an array with O(1) initialisation *)
Record arr : Type := Arr { aV : nat -> bool; aF : nat -> nat; aT : nat -> nat; atop : nat }.

Definition initialized (a : arr) (i : nat) : bool :=
  Nat.ltb (aF a i) (atop a) && Nat.eqb (aT a (aF a i)) i.

Definition aread (a : arr) (i : nat) : bool := initialized a i && aV a i.

Definition awrite (a : arr) (i : nat) (b : bool) : arr :=
  if initialized a i then Arr (fset (aV a) i b) (aF a) (aT a) (atop a)
  else Arr (fset (aV a) i b) (fset (aF a) i (atop a)) (fset (aT a) (atop a) i) (S (atop a)).

(** After a crash the three arrays hold garbage; only the count is reset. *)
Definition arr_crashed (a : arr) : Prop := atop a = 0.

Definition arr_inv (R : nat -> Prop) (a : arr) : Prop :=
  forall i, initialized a i = true -> R i.

Lemma arr_inv_crashed R a : arr_crashed a -> arr_inv R a.
Proof.
  unfold arr_crashed, arr_inv, initialized. intros H i Hi. rewrite H in Hi.
  apply andb_true_iff in Hi as (Hi & _). apply Nat.ltb_lt in Hi. lia.
Qed.

Lemma arr_inv_write (R : nat -> Prop) a i b : arr_inv R a -> R i -> arr_inv R (awrite a i b).
Proof.
  unfold arr_inv, awrite. intros Ha Hi j. destruct (initialized a i) eqn:Ei.
  - unfold initialized. simpl. exact (Ha j).
  - unfold initialized. simpl. intros Hj. apply andb_true_iff in Hj as (Hlt & Heq).
    apply Nat.ltb_lt in Hlt. apply Nat.eqb_eq in Heq.
    destruct (Nat.eq_dec j i) as [->|Hne]; [exact Hi|].
    rewrite (fset_other (aF a) i (atop a) j Hne) in Hlt, Heq.
    destruct (Nat.eq_dec (aF a j) (atop a)) as [Htop|Htop].
    + rewrite Htop, fset_same in Heq. congruence.
    + rewrite fset_other in Heq by exact Htop. apply Ha. unfold initialized.
      apply andb_true_iff. split; [apply Nat.ltb_lt; lia|apply Nat.eqb_eq; exact Heq].
Qed.

Lemma arr_inv_read (R : nat -> Prop) a i : arr_inv R a -> aread a i = true -> R i.
Proof.
  unfold aread. intros Ha Hr. apply andb_true_iff in Hr as (Hi & _). exact (Ha i Hi).
Qed.

Lemma arr_inv_mono (R R' : nat -> Prop) a : (forall o, R o -> R' o) -> arr_inv R a -> arr_inv R' a.
Proof. unfold arr_inv. auto. Qed.

(** ** BitsetAtomic (§6.4.1) *)
Inductive bitset_step : tpc -> arr -> tpc -> arr -> Prop :=
| bitset_mark a o : bitset_step (TDone o) a TIdle (awrite a o true).

Definition bitset : variant :=
  Variant arr arr_crashed aread (fun _ a a' => a' = a) (fun o a a' => a' = awrite a o true)
    bitset_step.

Theorem claim1_bitset g x o :
  reachable bitset (g, x) -> query bitset x o = true -> rf g o.
Proof.
  apply (query_sound bitset arr_inv). split; simpl.
  - intros x' Hx'. exact (arr_inv_crashed _ x' Hx').
  - exact arr_inv_read.
  - exact arr_inv_mono.
  - intros R a a' _ Ha _ ->. exact Ha.
  - intros R a a' o' Ha Ho ->. exact (arr_inv_write R a o' true Ha Ho).
  - intros R a a' p p' Ha Hd _ Hst. destruct Hst as [a1 o1].
    split; [exact (arr_inv_write R a1 o1 true Ha (Hd o1 eq_refl))|split; discriminate].
Qed.

(** ** MarkableAtomicPointer (§6.4.2) *)

(** The DRAM replica of the pointer to each node. *)
Definition ptrs : Type := nat -> option bool.

Definition unmarked (p : ptrs) (o : nat) : bool :=
  match p o with Some false => true | _ => false end.

Definition ptrs_crashed (p : ptrs) : Prop := forall o, p o = None.

Definition ptrs_inv (R : nat -> Prop) (p : ptrs) : Prop := forall o, unmarked p o = true -> R o.

Inductive ptr_step : tpc -> ptrs -> tpc -> ptrs -> Prop :=
(* Algorithm 6.3 line 4: recovering the pointer field writes the pointer marked *)
| ptr_recover_field p o : ptr_step TIdle p TIdle (fset p o (Some true))
(* Algorithm 6.4 line 2.3: after recover_node returned, DWCAS the marked pointer to unmarked *)
| ptr_unmark p o : p o = Some true -> ptr_step (TDone o) p TIdle (fset p o (Some false))
| ptr_unmark_fail p o : p o <> Some true -> ptr_step (TDone o) p TIdle p
(* a Mirror CAS of the data structure stores an unmarked pointer to a held node *)
| ptr_store p o : ptr_step (THold o) p TIdle (fset p o (Some false)).

Lemma ptrs_inv_set (R : nat -> Prop) p o m : ptrs_inv R p -> (m = Some false -> R o) -> ptrs_inv R (fset p o m).
Proof.
  unfold ptrs_inv, unmarked. intros Hp Hm i. destruct (Nat.eq_dec i o) as [->|Hne].
  - rewrite fset_same. destruct m as [[|]|]; try discriminate. intros _. exact (Hm eq_refl).
  - rewrite fset_other by exact Hne. exact (Hp i).
Qed.

Lemma ptrs_inv_crashed R p : ptrs_crashed p -> ptrs_inv R p.
Proof. unfold ptrs_crashed, ptrs_inv, unmarked. intros H o. rewrite H. discriminate. Qed.

Lemma ptr_step_sound (R : nat -> Prop) p p' q q' :
  ptrs_inv R p -> (forall o, q = TDone o -> R o) -> (forall o, q = THold o -> R o) ->
  ptr_step q p q' p' -> ptrs_inv R p' /\ q' = TIdle.
Proof.
  intros Hp Hd Hh Hst. destruct Hst as [p o|p o _|p o _|p o]; split; try reflexivity.
  - apply ptrs_inv_set; [exact Hp|discriminate].
  - apply ptrs_inv_set; [exact Hp|intros _; exact (Hd o eq_refl)].
  - exact Hp.
  - apply ptrs_inv_set; [exact Hp|intros _; exact (Hh o eq_refl)].
Qed.

Definition markable : variant :=
  Variant ptrs ptrs_crashed unmarked (fun _ p p' => p' = p) (fun _ p p' => p' = p) ptr_step.

Theorem claim1_markable g x o :
  reachable markable (g, x) -> query markable x o = true -> rf g o.
Proof.
  apply (query_sound markable ptrs_inv). split; simpl.
  - intros p Hp. exact (ptrs_inv_crashed _ p Hp).
  - intros R p o' Hp Hq. exact (Hp o' Hq).
  - unfold ptrs_inv. auto.
  - intros R p p' _ Hp _ ->. exact Hp.
  - intros R p p' _ Hp _ ->. exact Hp.
  - intros R p p' q q' Hp Hd Hh Hst.
    destruct (ptr_step_sound R p p' q q' Hp Hd Hh Hst) as (Hp' & ->).
    split; [exact Hp'|split; discriminate].
Qed.

(** ** HybridAtomicPointer (§6.4.3) *)
Inductive hybrid_step : tpc -> ptrs * arr -> tpc -> ptrs * arr -> Prop :=
| hybrid_ptr q p q' p' a : ptr_step q p q' p' -> hybrid_step q (p, a) q' (p', a)
(* after recover_node returned: set the node's bit (then unmark, by ptr_unmark) *)
| hybrid_set_bit p a o : hybrid_step (TDone o) (p, a) (TDone o) (p, awrite a o true)
(* a marked pointer to a node whose bit is set: unmark it without recovering *)
| hybrid_unmark_by_bit p a o :
    p o = Some true -> aread a o = true ->
    hybrid_step TIdle (p, a) TIdle (fset p o (Some false), a).

Definition hybrid_query (x : ptrs * arr) (o : nat) : bool := unmarked (fst x) o || aread (snd x) o.

Definition hybrid_inv (R : nat -> Prop) (x : ptrs * arr) : Prop := ptrs_inv R (fst x) /\ arr_inv R (snd x).

Definition hybrid : variant :=
  Variant (ptrs * arr) (fun x => ptrs_crashed (fst x) /\ arr_crashed (snd x)) hybrid_query
    (fun _ x x' => x' = x) (fun _ x x' => x' = x) hybrid_step.

Theorem claim1_hybrid g x o :
  reachable hybrid (g, x) -> query hybrid x o = true -> rf g o.
Proof.
  apply (query_sound hybrid hybrid_inv). split; simpl.
  - intros [p a] (Hp & Ha). split; [exact (ptrs_inv_crashed _ p Hp)|exact (arr_inv_crashed _ a Ha)].
  - intros R [p a] o' (Hp & Ha) Hq. unfold hybrid_query in Hq. simpl in Hq.
    apply orb_true_iff in Hq as [Hq|Hq]; [exact (Hp o' Hq)|exact (arr_inv_read R a o' Ha Hq)].
  - intros R R' [p a] Hm (Hp & Ha). split; [unfold ptrs_inv in *; auto|exact (arr_inv_mono R R' a Hm Ha)].
  - intros R x1 x' _ Hx _ ->. exact Hx.
  - intros R x1 x' _ Hx _ ->. exact Hx.
  - intros R x1 x' q q' (Hp & Ha) Hd Hh Hst. destruct Hst as [q p q' p' a Hps|p a o'|p a o' _ Hb].
    + destruct (ptr_step_sound R p p' q q' Hp Hd Hh Hps) as (Hp' & ->).
      split; [split; assumption|split; discriminate].
    + split; [split; [exact Hp|exact (arr_inv_write R a o' true Ha (Hd o' eq_refl))]|].
      split; [intros o1 H; exact H|discriminate].
    + split; [split; [|exact Ha]|split; discriminate].
      apply ptrs_inv_set; [exact Hp|intros _; exact (arr_inv_read R a o' Ha Hb)].
Qed.

(** ** Zeroed DRAM: the sequence word of each field's DRAM pair *)
Definition seqs : Type := nat -> Z.

Definition seqs_crashed (d : seqs) : Prop := forall o, d o = 0%Z.

(** Both zeroed-DRAM variants read the field's DRAM sequence word: the
    field counts as recovered iff [recovered_word] holds of it (false of the
    zeroed word); line 5 writes [line5_word sn] for the NVMM sequence [sn]
    (or line 3 writes nothing); a Mirror write by a holder writes
    [write_word] of the old word; allocation writes [alloc_word]. *)
Section word.
  Context (recovered_word : Z -> bool) (line5_word write_word : Z -> Z) (alloc_word : Z).

  Definition word_query (d : seqs) (o : nat) : bool := recovered_word (d o).

  Inductive word_return (o : nat) (d : seqs) : seqs -> Prop :=
  | word_line5 sn : word_return o d (fset d o (line5_word sn))
  | word_line3 : word_return o d d.

  Inductive word_step : tpc -> seqs -> tpc -> seqs -> Prop :=
  | word_write d o : word_step (THold o) d (THold o) (fset d o (write_word (d o)))
  | word_done d o : word_step (THold o) d TIdle d.

  Definition word_variant : variant :=
    Variant seqs seqs_crashed word_query word_return (fun o d d' => d' = fset d o alloc_word)
      word_step.

  Definition word_inv (R : nat -> Prop) (d : seqs) : Prop := forall o, word_query d o = true -> R o.

  Lemma word_inv_set (R : nat -> Prop) d o v : word_inv R d -> R o -> word_inv R (fset d o v).
  Proof.
    unfold word_inv, word_query. intros Hd Ho i. destruct (Nat.eq_dec i o) as [->|Hne]; [auto|].
    rewrite fset_other by exact Hne. exact (Hd i).
  Qed.

  Theorem claim1_word g x o :
    recovered_word 0%Z = false ->
    reachable word_variant (g, x) -> word_query x o = true -> rf g o.
  Proof.
    intros H0. apply (query_sound word_variant word_inv). split; simpl.
    - intros d Hd o' Hq. unfold word_query in Hq. rewrite Hd, H0 in Hq. discriminate.
    - intros R d o' Hd Hq. exact (Hd o' Hq).
    - unfold word_inv. auto.
    - intros R d d' o' Hd Ho Hr. destruct Hr; [exact (word_inv_set R d o' _ Hd Ho)|exact Hd].
    - intros R d d' o' Hd Ho ->. exact (word_inv_set R d o' _ Hd Ho).
    - intros R d d' q q' Hd _ Hh Hst. destruct Hst as [d o'|d o'].
      + split; [exact (word_inv_set R d o' _ Hd (Hh o' eq_refl))|].
        split; [discriminate|intros o1 H; exact H].
      + split; [exact Hd|split; discriminate].
  Qed.
End word.

(** ZMarkableAtomicPointer (§6.4.4): a field is recovered iff its DRAM
    sequence word is non-zero (NVMM sequence numbers start at 1); line 5
    writes the NVMM sequence number as it is; a Mirror write increments it
    modulo 2^64 (a wrap to 0 only makes the query answer no). *)
Definition zmarkable : variant :=
  word_variant (fun w => negb (Z.eqb w 0)) (fun sn => sn) (fun w => (w + 1) mod 2 ^ 64)%Z 1%Z.

Theorem claim1_zmarkable g x o :
  reachable zmarkable (g, x) -> query zmarkable x o = true -> rf g o.
Proof. apply claim1_word. reflexivity. Qed.

(** PseudoBitsetAtomic (§6.4.5): the MSB (2^63) of the DRAM sequence word
    is the recovered bit; sequence numbers use the low 63 bits, and line 5
    and every Mirror write keep the MSB set. *)
Definition msb : Z := (2 ^ 63)%Z.

Definition pseudo_bitset : variant :=
  word_variant (fun w => Z.leb msb w) (fun sn => msb + sn mod msb)%Z
    (fun w => msb + (w - msb + 1) mod msb)%Z msb.

Theorem claim1_pseudo_bitset g x o :
  reachable pseudo_bitset (g, x) -> query pseudo_bitset x o = true -> rf g o.
Proof. apply claim1_word. reflexivity. Qed.
