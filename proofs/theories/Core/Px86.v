(** * Px86, line-granular: an operational semantics, its litmus tests, and
      the line-granular persistence the protocol models import

    The operational reading of [/work/shared/design/PX86.md], as the litmus
    engine [impl/perdure-check/src/litmus] implements it, with the buffer
    and persistence rules of [impl/perdure-pm/src/px86.rs]
    ([ThreadBuffer], [LineHistory]):
    - per cache line ([mem], the part the protocol models can import without
      the rest) the sequence of writes that became visible to it, and a
      mark: how much of the sequence is guaranteed persisted; a crash keeps,
      of each line independently, a prefix at least as long as its mark
      ([crash_ok], [persisted]); a flush taking effect raises the mark to
      the length ([mem_flush]; [mem_flush_upto] for a write-back known to
      have taken effect by a fence, the simulator's reading);
    - per thread a program, a buffer of executed entries not yet taken
      effect ([entry]: stores, [clflush]es and [sfence]s — the engine's
      FIFO store buffer — and [clflushopt]/[clwb]s and [ntstore]s — its
      pending set — merged in program order), and registers;
    - an entry takes effect (leaves the buffer, [step_drain]) when every
      older entry of its thread lets it pass ([overtakes], the engine's
      [head_may_leave] and [may_take_effect]):
      + a store passes only an older write-back of another line and an
        older ntstore to another location;
      + a [clflush] is ordered like a store, and passes write-backs and
        ntstores;
      + a [clflushopt x]/[clwb x] passes everything but an older [sfence]
        and older stores and ntstores to [line x];
      + an [ntstore x] passes everything but an older [sfence] and older
        stores and ntstores to [x] (it may become visible before an older
        store to another location: the engine's resolved ambiguity);
      + an [sfence] passes nothing;
      a store, when it takes effect, is appended to its line's sequence; a
      [clflush]/[clflushopt]/[clwb x] raises the mark of [line x] to the
      length of the sequence; an [ntstore] is appended and raises the mark
      (visible and persisted together);
    - [load r x] reads the newest own buffered store or ntstore to [x], else
      the visible value;
    - [mfence] and the locked RMWs execute only when their thread's buffer
      is empty (stores visible, write-backs and ntstores taken effect): an
      [mfence] does nothing else; [cas [r] x old new] compares with the
      visible value and, on success, appends its write (r := 1), on
      failure writes nothing (r := 0); [xchg r x v] and [faa r x v] append
      [v] / old+[v] (r := old); a 16-byte CAS [IDwcas] compares and writes
      two locations of one line in one step, its two writes persisting as
      one write of the line's sequence or as two (in either order), as its
      [atomic] flag says ([exec_instr]); a locked RMW's write is visible at
      once and persisted only by a later flush or ntstore of its line;
    - a crash may come in any reachable state.

    Proved here: the six examples of PX86.md ([ss_allowed],
    [ss_sameline_forbidden], [clflush_forbidden], [clflushopt_allowed],
    [clflushopt_sfence_forbidden], [mp_clflush_forbidden], with an allowed
    outcome of each forbidden test so that none is vacuous).  The whole
    litmus suite [modelcheck/litmus/] (60 tests, every instruction above but
    the 16-byte CAS) is proved in [Px86Litmus.v], generated from the files by
    [tools/litmus_coq.py]; the 16-byte CAS, which the litmus format lacks,
    in [Px86Dwcas.v].

    Method.  An allowed outcome is shown by a schedule ([exec], checked by
    computation and turned into steps by [exec_steps]) and a crash choice.
    A forbidden outcome is shown by an inductive invariant found by
    computation: a finite set of states that contains the initial state and
    is closed under every step ([closed], decided by [vm_compute]; every
    step is among the enumerated successors, [step_succs]) and none of whose
    crash images ([images], complete by [crash_ok_images]) matches the
    outcome.  The set, and the schedules, are computed by searches
    ([explore], [explore_paths]) that need not be trusted: only the closure
    of the set and the replay of the schedules are used
    ([check_litmus_sound]).

    What the model abstracts: a location is an indivisible word and a value
    a natural number (the engine's values are signed and [faa] wraps; no
    test depends on it); [clwb] and [clflushopt] have the same semantics;
    instruction fetch, [lfence], non-write-back memory types, string
    operations and sizes other than one location per access (a 16-byte CAS
    excepted) are outside it.  The model has TSO store buffers; the
    simulator [Sim] that runs the implementation is sequentially consistent
    per step (see the engine's module docs). *)
From stdpp Require Import base list decidable relations.
From Coq Require Import Lia.

Notation loc := nat (only parsing).
Notation val := nat (only parsing).
Notation reg := nat (only parsing).

(** ** Line-granular persistence

    The part of the model that does not depend on threads or instructions,
    for the protocol models to import: per cache line, the sequence of
    writes that became visible to it and the mark; a write persists only
    when a flush of its line takes effect after it ([mem_flush], and
    [mem_flush_upto] for a [pwb] known to have taken effect by a fence), or
    when a crash happens to keep it ([crash_ok]: each line keeps a prefix of
    its sequence at least as long as its mark). *)

(** A write: the locations one instruction sets at once, in one step of its
    line's sequence (one location, except for a 16-byte CAS that persists
    atomically). *)
Notation write := (list (loc * val)) (only parsing).

(** The value of [x] after a sequence of writes (0 initially). *)
Definition seq_val (x : loc) (ws : list write) : val :=
  foldl (λ acc st, if decide (st.1 = x) then st.2 else acc) 0 (mjoin ws).

(** Per line (indexed from 0): the writes that became visible to it, in
    order, and how many of them are persisted for sure. *)
Record mem := Mem {
  m_lines : list (list write);
  m_marks : list nat;
}.

Global Instance mem_eq_dec : EqDecision mem.
Proof. solve_decision. Defined.

(** [nlines] lines, nothing written. *)
Definition mem_empty (nlines : nat) : mem := Mem (replicate nlines []) (replicate nlines 0).

Section persistence.
  (** The cache line of each location. *)
  Context (line : loc → nat).

  Definition line_hist (m : mem) (L : nat) : list write := default [] (m_lines m !! L).
  Definition mark (m : mem) (L : nat) : nat := default 0 (m_marks m !! L).

  (** Visible memory: every write of the line applied. *)
  Definition mem_visible (m : mem) (x : loc) : val := seq_val x (line_hist m (line x)).

  (** A write becomes visible: appended to the sequence of line [L]. *)
  Definition mem_write (m : mem) (L : nat) (w : write) : mem :=
    Mem (<[L := line_hist m L ++ [w]]> (m_lines m)) (m_marks m).

  (** A flush of line [L] takes effect: the mark rises to the length of its
      sequence. *)
  Definition mem_flush (m : mem) (L : nat) : mem :=
    Mem (m_lines m) (<[L := length (line_hist m L)]> (m_marks m)).

  (** A write-back issued when line [L] had [n] writes is known to have
      taken effect (its thread fenced): the mark rises to at least [n].
      Taking effect at issue is the least constraining point Px86 allows
      (the reading of the simulator, [LineHistory::flush_issued_at]). *)
  Definition mem_flush_upto (m : mem) (L n : nat) : mem :=
    Mem (m_lines m) (<[L := mark m L `max` (n `min` length (line_hist m L))]> (m_marks m)).

  (** A crash keeps, of each line [L], the first [keep L] writes: at least
      the mark, at most all. *)
  Definition crash_ok (m : mem) (keep : nat → nat) : Prop :=
    ∀ L, L < length (m_lines m) → mark m L ≤ keep L ≤ length (line_hist m L).

  Definition persisted (m : mem) (keep : nat → nat) (x : loc) : val :=
    seq_val x (take (keep (line x)) (line_hist m (line x))).

  Lemma crash_ok_all m : Forall2 (λ k ws, k ≤ length ws) (m_marks m) (m_lines m) →
    crash_ok m (λ L, length (line_hist m L)).
  Proof.
    intros HF L HL. split; [| done]. unfold mark, line_hist.
    destruct (lookup_lt_is_Some_2 _ _ HL) as [ws Hws].
    destruct (Forall2_lookup_r _ _ _ _ _ HF Hws) as (k & -> & Hk). by rewrite Hws.
  Qed.

  (** What a crash keeps of a location whose line was flushed after its last
      write to it: the visible value. *)
  Lemma persisted_flushed m keep x :
    crash_ok m keep → line x < length (m_lines m) → mark m (line x) = length (line_hist m (line x)) →
    persisted m keep x = mem_visible m x.
  Proof.
    intros Hok HL Hmark. unfold persisted, mem_visible. specialize (Hok _ HL).
    rewrite take_ge; [done | lia].
  Qed.

  (** ** Crash images, enumerated *)

  Fixpoint product (rs : list (list nat)) : list (list nat) :=
    match rs with
    | [] => [[]]
    | r :: rs' => r ≫= λ k, (k ::.) <$> product rs'
    end.

  Lemma elem_of_product rs kl : Forall2 (λ k r, k ∈ r) kl rs → kl ∈ product rs.
  Proof.
    induction 1 as [| k r kl rs Hk _ IH]; simpl; [by left |].
    apply elem_of_list_bind. exists k. split; [| done].
    apply elem_of_list_fmap. by exists kl.
  Qed.

  Lemma product_elem_of rs kl : kl ∈ product rs → Forall2 (λ k r, k ∈ r) kl rs.
  Proof.
    revert kl. induction rs as [| r rs IH]; simpl; intros kl.
    - intros ->%elem_of_list_singleton. constructor.
    - intros (k & Hkl & Hk)%elem_of_list_bind. apply elem_of_list_fmap in Hkl as (kl' & -> & ?).
      constructor; [done |]. by apply IH.
  Qed.

  (** The crash choices of [m], as lists indexed by line. *)
  Definition images (m : mem) : list (list nat) :=
    product ((λ L, seq (mark m L) (S (length (line_hist m L)) - mark m L)) <$>
               seq 0 (length (m_lines m))).

  Definition keep_of (kl : list nat) : nat → nat := λ L, default 0 (kl !! L).

  Lemma images_crash_ok m kl : kl ∈ images m → crash_ok m (keep_of kl).
  Proof.
    intros Hkl%product_elem_of L HL. unfold keep_of.
    destruct (Forall2_lookup_r _ _ _ L (seq (mark m L) (S (length (line_hist m L)) - mark m L)) Hkl)
      as (k & -> & Hk).
    { rewrite list_lookup_fmap, lookup_seq_lt; [done | exact HL]. }
    apply elem_of_seq in Hk. simpl. lia.
  Qed.

  (** Every crash choice agrees, on the persisted values, with one of the
      enumerated images. *)
  Lemma crash_ok_images m keep :
    crash_ok m keep → ∃ kl, kl ∈ images m ∧ ∀ x, persisted m keep x = persisted m (keep_of kl) x.
  Proof.
    intros Hok. exists (keep <$> seq 0 (length (m_lines m))). split.
    - apply elem_of_product.
      assert (∀ Ls, (∀ L, L ∈ Ls → L < length (m_lines m)) →
        Forall2 (λ k r, k ∈ r) (keep <$> Ls)
          ((λ L, seq (mark m L) (S (length (line_hist m L)) - mark m L)) <$> Ls)) as HF.
      { induction Ls as [| L Ls IH]; intros HLs; simpl; constructor.
        - apply elem_of_seq. specialize (Hok L (HLs L ltac:(by left))). lia.
        - apply IH. intros L' ?. apply HLs. by right. }
      apply HF. intros L ?%elem_of_seq. lia.
    - intros x. unfold persisted, keep_of. f_equal.
      destruct (decide (line x < length (m_lines m))) as [Hlt | Hge].
      + by rewrite list_lookup_fmap, lookup_seq_lt.
      + unfold line_hist. rewrite (lookup_ge_None_2 (m_lines m)) by lia. simpl. by rewrite !take_nil.
  Qed.
End persistence.

(** ** Instructions and thread states *)

Inductive instr :=
  | IStore (x : loc) (v : val)
  | ILoad (r : reg) (x : loc)
  | IClflush (x : loc)
  | IClflushopt (x : loc)
  | IClwb (x : loc)
  | ISfence
  | IMfence
  (** [cas [r] x old new]: [r] gets 1 on success, 0 on failure. *)
  | ICas (r : option reg) (x : loc) (old new : val)
  (** [xchg r x v], [faa r x v]: [r] gets the old value. *)
  | IXchg (r : reg) (x : loc) (v : val)
  | IFaa (r : reg) (x : loc) (v : val)
  | INtstore (x : loc) (v : val)
  (** [cmpxchg16b]: two locations of one line (an aligned 16-byte pair)
      compared and written in one step; [atomic] says whether the pair also
      persists atomically (one write of the line's sequence) or as two
      writes, in either order. *)
  | IDwcas (atomic : bool) (r : option reg) (x1 x2 : loc) (old1 old2 new1 new2 : val).

(** Executed, not yet taken effect: the thread's store buffer and its
    pending [clflushopt]/[clwb]/[ntstore]s, in program order. *)
Inductive entry :=
  | EStore (x : loc) (v : val)
  | EClflush (x : loc)
  | EClflushopt (x : loc)
  | ESfence
  | ENt (x : loc) (v : val).

Record tstate := TState {
  t_prog : list instr;       (* still to execute *)
  t_buf : list entry;        (* oldest first *)
  t_regs : list (reg * val); (* newest first *)
}.

Record state := State {
  s_threads : list tstate;
  s_mem : mem;
}.

Global Instance instr_eq_dec : EqDecision instr.
Proof. solve_decision. Defined.
Global Instance entry_eq_dec : EqDecision entry.
Proof. solve_decision. Defined.
Global Instance tstate_eq_dec : EqDecision tstate.
Proof. solve_decision. Defined.
Global Instance state_eq_dec : EqDecision state.
Proof. solve_decision. Defined.

(** The newest own buffered store or pending [ntstore] to [x]. *)
Definition buf_val (x : loc) (b : list entry) : option val :=
  foldl (λ acc e, match e with
                  | EStore y v | ENt y v => if decide (y = x) then Some v else acc
                  | _ => acc end)
    None b.

Fixpoint reg_val (regs : list (reg * val)) (r : reg) : option val :=
  match regs with
  | [] => None
  | (r', v) :: regs' => if decide (r' = r) then Some v else reg_val regs' r
  end.

Definition push (th : tstate) (e : entry) : tstate := TState (t_prog th) (t_buf th ++ [e]) (t_regs th).
Definition set_reg (r : reg) (v : val) (th : tstate) : tstate :=
  TState (t_prog th) (t_buf th) ((r, v) :: t_regs th).
Definition set_reg_opt (r : option reg) (v : val) (th : tstate) : tstate :=
  match r with Some r => set_reg r v th | None => th end.

Section model.
  Context (line : loc → nat).

  Definition line_of (s : state) (L : nat) : list write := line_hist (s_mem s) L.
  Definition mark_of (s : state) (L : nat) : nat := mark (s_mem s) L.

  (** The visible value of [x]. *)
  Definition visible (s : state) (x : loc) : val := mem_visible line (s_mem s) x.

  (** [overtakes e older]: [e] may take effect before the older entry of
      its thread (the rules of [ThreadBuffer::head_may_leave] and
      [ThreadBuffer::may_take_effect] in [impl/perdure-pm/src/px86.rs]). *)
  Definition overtakes (e older : entry) : Prop :=
    match e, older with
    (* a store leaves the buffer in FIFO order; it passes a pending
       write-back of another line and a pending ntstore to another
       location *)
    | EStore x _, EClflushopt y => line y ≠ line x
    | EStore x _, ENt y _ => y ≠ x
    (* a clflush is FIFO with stores, and not ordered with pending entries *)
    | EClflush _, (EClflushopt _ | ENt _ _) => True
    (* a write-back waits for older stores and ntstores to its line and for
       older sfences *)
    | EClflushopt x, EStore y _ => line y ≠ line x
    | EClflushopt _, (EClflush _ | EClflushopt _) => True
    | EClflushopt x, ENt y _ => line y ≠ line x
    (* an ntstore waits for older stores and ntstores to its location and
       for older sfences *)
    | ENt x _, EStore y _ => y ≠ x
    | ENt _ _, (EClflush _ | EClflushopt _) => True
    | ENt x _, ENt y _ => y ≠ x
    (* an sfence passes nothing *)
    | _, _ => False
    end.
  Global Instance overtakes_dec e older : Decision (overtakes e older).
  Proof. destruct e, older; simpl; apply _. Defined.

  Definition upd (s : state) (t : nat) (th : tstate) (m : mem) : state :=
    State (<[t := th]> (s_threads s)) m.

  Definition load_val (m : mem) (th : tstate) (x : loc) : val :=
    match buf_val x (t_buf th) with Some v => v | None => mem_visible line m x end.

  (** Thread [t] executes [i]; [th] is its state with [i] taken off its
      program.  The result lists every state this may lead to: none when
      [i] may not execute now (an [mfence] or locked RMW waits until the
      thread's buffer is empty, i.e. its stores visible and its write-backs
      and ntstores taken effect), two for a non-atomically persisting
      16-byte CAS (the order of its two writes in the line). *)
  Definition exec_instr (s : state) (t : nat) (i : instr) (th : tstate) : list state :=
    let m := s_mem s in
    let drained := bool_decide (t_buf th = []) in
    match i with
    | IStore x v => [upd s t (push th (EStore x v)) m]
    | ILoad r x => [upd s t (set_reg r (load_val m th x) th) m]
    | IClflush x => [upd s t (push th (EClflush x)) m]
    | IClflushopt x | IClwb x => [upd s t (push th (EClflushopt x)) m]
    | ISfence => [upd s t (push th ESfence) m]
    | INtstore x v => [upd s t (push th (ENt x v)) m]
    | IMfence => if drained then [upd s t th m] else []
    | ICas r x old new =>
        if drained then
          if decide (mem_visible line m x = old)
          then [upd s t (set_reg_opt r 1 th) (mem_write m (line x) [(x, new)])]
          else [upd s t (set_reg_opt r 0 th) m]
        else []
    | IXchg r x v =>
        if drained then [upd s t (set_reg r (mem_visible line m x) th) (mem_write m (line x) [(x, v)])]
        else []
    | IFaa r x v =>
        if drained then
          [upd s t (set_reg r (mem_visible line m x) th)
             (mem_write m (line x) [(x, mem_visible line m x + v)])]
        else []
    | IDwcas atomic r x1 x2 old1 old2 new1 new2 =>
        if drained && bool_decide (line x1 = line x2 ∧ x1 ≠ x2) then
          if decide (mem_visible line m x1 = old1 ∧ mem_visible line m x2 = old2) then
            let th' := set_reg_opt r 1 th in
            if atomic then [upd s t th' (mem_write m (line x1) [(x1, new1); (x2, new2)])]
            else [upd s t th' (mem_write (mem_write m (line x1) [(x1, new1)]) (line x2) [(x2, new2)]);
                  upd s t th' (mem_write (mem_write m (line x2) [(x2, new2)]) (line x1) [(x1, new1)])]
          else [upd s t (set_reg_opt r 0 th) m]
        else []
    end.

  (** An entry taking effect: a store becomes visible; a clflush or
      write-back raises its line's mark; an ntstore becomes visible and
      persisted together; an sfence completes. *)
  Definition take_effect (e : entry) (m : mem) : mem :=
    match e with
    | EStore x v => mem_write m (line x) [(x, v)]
    | EClflush x | EClflushopt x => mem_flush m (line x)
    | ENt x v => mem_flush (mem_write m (line x) [(x, v)]) (line x)
    | ESfence => m
    end.

  Inductive step : state → state → Prop :=
    | step_issue s t th i p s' :
        s_threads s !! t = Some th → t_prog th = i :: p →
        s' ∈ exec_instr s t i (TState p (t_buf th) (t_regs th)) →
        step s s'
    | step_drain s t th b1 e b2 :
        s_threads s !! t = Some th → t_buf th = b1 ++ e :: b2 → Forall (overtakes e) b1 →
        step s (upd s t (TState (t_prog th) (b1 ++ b2) (t_regs th)) (take_effect e (s_mem s))).

  (** ** Outcomes *)

  (** Persisted location values, and register values [(thread, reg, val)]
      at the crash. *)
  Record outcome := Outcome { o_locs : list (loc * val); o_regs : list (nat * reg * val) }.

  Definition thread_reg (s : state) (t : nat) (r : reg) : option val :=
    th ← s_threads s !! t; reg_val (t_regs th) r.

  Definition matches (s : state) (keep : nat → nat) (O : outcome) : Prop :=
    Forall (λ xv, persisted line (s_mem s) keep xv.1 = xv.2) (o_locs O) ∧
    Forall (λ trv, thread_reg s trv.1.1 trv.1.2 = Some trv.2) (o_regs O).

  Global Instance matches_dec s keep O : Decision (matches s keep O).
  Proof. apply _. Defined.

  (** The initial state: every location 0, nothing persisted beyond that. *)
  Definition init (nlines : nat) (progs : list (list instr)) : state :=
    State (map (λ p, TState p [] []) progs) (mem_empty nlines).

  (** The initial state with initial values [inits] (the litmus [init]
      directive): each line starts with one persisted write of its
      locations' initial values. *)
  Definition init_with (nlines : nat) (inits : list (loc * val)) (progs : list (list instr)) : state :=
    let w L := filter (λ xv, line xv.1 = L) inits in
    State (map (λ p, TState p [] []) progs)
          (Mem ((λ L, if decide (w L = []) then [] else [w L]) <$> seq 0 nlines)
               ((λ L, if decide (w L = []) then 0 else 1) <$> seq 0 nlines)).

  (** Some execution from [s0] and crash point yield outcome [O] ([allow O]
      of the litmus format); [forbid O] is its negation. *)
  Definition observable_from (s0 : state) (O : outcome) : Prop :=
    ∃ s keep, rtc step s0 s ∧ crash_ok (s_mem s) keep ∧ matches s keep O.

  Definition observable (nlines : nat) (progs : list (list instr)) (O : outcome) : Prop :=
    observable_from (init nlines progs) O.

  (** ** Schedules: exhibiting executions *)

  (** [Exec t k]: thread [t] executes its next instruction, taking the
      [k]-th of its results; [Drain t k]: the [k]-th entry of [t]'s buffer
      takes effect. *)
  Inductive choice := Exec (t k : nat) | Drain (t k : nat).

  Definition exec_choice (s : state) (c : choice) : option state :=
    match c with
    | Exec t k =>
        th ← s_threads s !! t;
        match t_prog th with
        | [] => None
        | i :: p => exec_instr s t i (TState p (t_buf th) (t_regs th)) !! k
        end
    | Drain t k =>
        th ← s_threads s !! t;
        e ← t_buf th !! k;
        if decide (Forall (overtakes e) (take k (t_buf th))) then
          Some (upd s t (TState (t_prog th) (take k (t_buf th) ++ drop (S k) (t_buf th)) (t_regs th))
                  (take_effect e (s_mem s)))
        else None
    end.

  Fixpoint exec (s : state) (cs : list choice) : option state :=
    match cs with
    | [] => Some s
    | c :: cs' => s' ← exec_choice s c; exec s' cs'
    end.

  Lemma exec_choice_step s c s' : exec_choice s c = Some s' → step s s'.
  Proof.
    destruct c as [t k | t k]; simpl.
    - destruct (s_threads s !! t) as [th |] eqn:Hth; simpl; [| done].
      destruct (t_prog th) as [| i p] eqn:Hp; [done |]. intros Hk.
      eapply step_issue; [done | done |]. by eapply elem_of_list_lookup_2.
    - destruct (s_threads s !! t) as [th |] eqn:Hth; simpl; [| done].
      destruct (t_buf th !! k) as [e |] eqn:He; simpl; [| done].
      case_decide as Hpass; [intros [= <-] | done].
      eapply step_drain; [done | | done].
      symmetry. by apply take_drop_middle.
  Qed.

  Lemma exec_steps s cs s' : exec s cs = Some s' → rtc step s s'.
  Proof.
    revert s. induction cs as [| c cs IH]; simpl; intros s.
    - intros [= <-]. apply rtc_refl.
    - destruct (exec_choice s c) as [s1 |] eqn:Hc; simpl; [| done].
      intros Hexec. eapply rtc_l; [by apply (exec_choice_step s c) | by apply IH].
  Qed.

  (** ** Successors: every step, enumerated *)

  Fixpoint splits {A} (l : list A) : list (list A * A * list A) :=
    match l with
    | [] => []
    | x :: l' => ([], x, l') :: ((λ '(b1, y, b2), (x :: b1, y, b2)) <$> splits l')
    end.

  Lemma elem_of_splits {A} (l : list A) b1 x b2 : l = b1 ++ x :: b2 → (b1, x, b2) ∈ splits l.
  Proof.
    revert l. induction b1 as [| y b1 IH]; intros l ->; simpl; [by left |].
    right. apply elem_of_list_fmap. exists (b1, x, b2). split; [done |]. by apply IH.
  Qed.

  Definition drain_succ (s : state) (t : nat) (th : tstate) (b : list entry * entry * list entry)
      : option state :=
    let '(b1, e, b2) := b in
    if decide (Forall (overtakes e) b1) then
      Some (upd s t (TState (t_prog th) (b1 ++ b2) (t_regs th)) (take_effect e (s_mem s)))
    else None.

  Definition thread_succs (s : state) (t : nat) (th : tstate) : list state :=
    match t_prog th with
    | [] => []
    | i :: p => exec_instr s t i (TState p (t_buf th) (t_regs th))
    end ++ omap (drain_succ s t th) (splits (t_buf th)).

  Definition succs (s : state) : list state :=
    seq 0 (length (s_threads s)) ≫= λ t,
      match s_threads s !! t with Some th => thread_succs s t th | None => [] end.

  Lemma step_succs s s' : step s s' → s' ∈ succs s.
  Proof.
    intros Hstep. unfold succs. apply elem_of_list_bind.
    destruct Hstep as [s t th i p s' Hth Hp Hi | s t th b1 e b2 Hth Hb Hpass];
      exists t; (split; [| apply elem_of_seq; apply lookup_lt_Some in Hth; lia]);
      rewrite Hth; unfold thread_succs.
    - rewrite Hp. apply elem_of_app. by left.
    - apply elem_of_app. right. apply elem_of_list_omap. exists (b1, e, b2). split.
      + apply elem_of_splits. done.
      + simpl. by rewrite decide_True.
  Qed.

  (** ** Invariants from closed sets of states *)

  Definition closed (S : list state) : Prop := Forall (λ s, Forall (λ s', s' ∈ S) (succs s)) S.

  Lemma closed_reachable S s0 s : closed S → s0 ∈ S → rtc step s0 s → s ∈ S.
  Proof.
    intros Hcl Hs0 Hr. induction Hr as [s | s1 s2 s3 H12 _ IH]; [done |].
    apply IH. unfold closed in Hcl. rewrite Forall_forall in Hcl.
    pose proof (Hcl s1 Hs0) as Hsucc. rewrite Forall_forall in Hsucc.
    by apply Hsucc, step_succs.
  Qed.

  (** A search for the reachable states (with fuel); only the closure of its
      result is used, checked separately. *)
  Fixpoint explore (fuel : nat) (todo seen : list state) : list state :=
    match fuel with
    | 0 => seen
    | S fuel' =>
        match todo with
        | [] => seen
        | s :: todo' =>
            if decide (s ∈ seen) then explore fuel' todo' seen
            else explore fuel' (succs s ++ todo') (s :: seen)
        end
    end.

  (** [O] is not observable if a closed set containing the initial state has
      no crash image matching it. *)
  Lemma forbidden_by_invariant s0 O S :
    s0 ∈ S → closed S →
    Forall (λ s, Forall (λ kl, ¬ matches s (keep_of kl) O) (images (s_mem s))) S →
    ¬ observable_from s0 O.
  Proof.
    intros Hinit Hcl Hno (s & keep & Hr & Hok & Hm).
    pose proof (closed_reachable S _ s Hcl Hinit Hr) as Hs.
    rewrite Forall_forall in Hno. specialize (Hno s Hs). rewrite Forall_forall in Hno.
    destruct (crash_ok_images line (s_mem s) keep Hok) as (kl & Hkl & Hsame).
    apply (Hno kl Hkl). destruct Hm as [Hlocs Hregs]. split; [| done].
    eapply Forall_impl; [exact Hlocs |]. intros xv Hxv. simpl in *. by rewrite <- Hsame.
  Qed.

  Lemma allowed_by_schedule s0 O cs s kl :
    exec s0 cs = Some s → kl ∈ images (s_mem s) → matches s (keep_of kl) O →
    observable_from s0 O.
  Proof.
    intros Hexec Hkl Hm. exists s, (keep_of kl). split; [by eapply exec_steps |].
    split; [by apply images_crash_ok | done].
  Qed.

  (** ** Litmus tests, decided by computation

      A test: its lines, initial values, programs and [allow]/[forbid]
      expectations, as in a [*.litmus] file. [check_litmus] decides it: it
      searches the reachable states, keeping a schedule to each
      ([explore_paths], untrusted), checks that they form a closed set
      containing the initial state (when the test forbids something) and,
      for each [allow], replays a schedule to a state with a matching crash
      image ([check_litmus_sound]). *)

  Inductive expectation := Allow (O : outcome) | Forbid (O : outcome).

  Definition expectation_holds (s0 : state) (e : expectation) : Prop :=
    match e with
    | Allow o => observable_from s0 o
    | Forbid o => ¬ observable_from s0 o
    end.

  (** Every step, labelled with the choice that replays it. *)
  Definition thread_lsuccs (s : state) (t : nat) (th : tstate) : list (choice * state) :=
    match t_prog th with
    | [] => []
    | i :: p => imap (λ k s', (Exec t k, s')) (exec_instr s t i (TState p (t_buf th) (t_regs th)))
    end ++ omap (λ b, let '(b1, _, _) := b in (Drain t (length b1) ,.) <$> drain_succ s t th b)
                (splits (t_buf th)).

  Definition lsuccs (s : state) : list (choice * state) :=
    seq 0 (length (s_threads s)) ≫= λ t,
      match s_threads s !! t with Some th => thread_lsuccs s t th | None => [] end.

  (** The reachable states, each with a schedule reaching it (newest choice
      first). *)
  Fixpoint explore_paths (fuel : nat) (todo seen : list (state * list choice))
      : list (state * list choice) :=
    match fuel with
    | 0 => seen
    | S fuel' =>
        match todo with
        | [] => seen
        | (s, cs) :: todo' =>
            if decide (s ∈ seen.*1) then explore_paths fuel' todo' seen
            else explore_paths fuel' (((λ '(c, s'), (s', c :: cs)) <$> lsuccs s) ++ todo') ((s, cs) :: seen)
        end
    end.

  Fixpoint find_some {A B} (f : A → option B) (l : list A) : option B :=
    match l with
    | [] => None
    | a :: l' => match f a with Some b => Some b | None => find_some f l' end
    end.

  (** A schedule and a crash image yielding [O], if the states searched have
      one. *)
  Definition witness (R : list (state * list choice)) (O : outcome) : option (list choice * list nat) :=
    find_some (λ '(s, cs), find_some (λ kl, if decide (matches s (keep_of kl) O)
                                            then Some (reverse cs, kl) else None)
                             (images (s_mem s))) R.

  Definition check_allow (s0 : state) (O : outcome) (w : option (list choice * list nat)) : bool :=
    match w with
    | Some (cs, kl) =>
        match exec s0 cs with
        | Some s => bool_decide (kl ∈ images (s_mem s) ∧ matches s (keep_of kl) O)
        | None => false
        end
    | None => false
    end.

  Definition check_forbid (S : list state) (O : outcome) : bool :=
    bool_decide (Forall (λ s, Forall (λ kl, ¬ matches s (keep_of kl) O) (images (s_mem s))) S).

  Definition is_forbid (e : expectation) : bool := match e with Forbid _ => true | _ => false end.

  Definition check_exps (s0 : state) (exps : list expectation) (R : list (state * list choice)) : bool :=
    (if existsb is_forbid exps then bool_decide (s0 ∈ R.*1 ∧ closed R.*1) else true) &&
    forallb (λ e, match e with
                  | Allow o => check_allow s0 o (witness R o)
                  | Forbid o => check_forbid R.*1 o
                  end) exps.

  Lemma check_exps_sound s0 exps R :
    check_exps s0 exps R = true → Forall (expectation_holds s0) exps.
  Proof.
    unfold check_exps. intros [Hcl Hall]%andb_prop. apply Forall_forall. intros e He.
    pose proof (proj1 (forallb_forall _ exps) Hall e (proj1 (elem_of_list_In _ _) He)) as Hc. destruct e as [o | o]; simpl in *.
    - destruct (witness R o) as [[cs kl] |]; [| done]. unfold check_allow in Hc.
      destruct (exec s0 cs) as [s |] eqn:Hexec; [| done].
      apply bool_decide_eq_true in Hc as [Hkl Hm]. by eapply allowed_by_schedule.
    - assert (existsb is_forbid exps = true) as Hex.
      { apply existsb_exists. exists (Forbid o). split; [by apply elem_of_list_In | done]. }
      rewrite Hex in Hcl. apply bool_decide_eq_true in Hcl as [Hs0 Hclosed].
      apply bool_decide_eq_true in Hc. by eapply forbidden_by_invariant.
  Qed.

  Definition check_litmus (fuel nlines : nat) (inits : list (loc * val)) (progs : list (list instr))
      (exps : list expectation) : bool :=
    let s0 := init_with nlines inits progs in
    check_exps s0 exps (explore_paths fuel [(s0, [])] []).

  Lemma check_litmus_sound fuel nlines inits progs exps :
    check_litmus fuel nlines inits progs exps = true →
    Forall (expectation_holds (init_with nlines inits progs)) exps.
  Proof. apply check_exps_sound. Qed.
End model.

Notation Issue t := (Exec t 0) (only parsing).

(** A litmus test of [modelcheck/litmus/]. *)
Record litmus := Litmus {
  lt_line : loc → nat;
  lt_nlines : nat;
  lt_init : list (loc * val);
  lt_progs : list (list instr);
  lt_exps : list expectation;
}.

(** Every expectation of the test holds. *)
Definition litmus_holds (T : litmus) : Prop :=
  Forall (expectation_holds (lt_line T) (init_with (lt_line T) (lt_nlines T) (lt_init T) (lt_progs T)))
    (lt_exps T).

Lemma litmus_holds_by_check T fuel :
  check_litmus (lt_line T) fuel (lt_nlines T) (lt_init T) (lt_progs T) (lt_exps T) = true →
  litmus_holds T.
Proof. apply check_litmus_sound. Qed.

(** Decides a test by computation. *)
Ltac decide_litmus :=
  apply (litmus_holds_by_check _ (Nat.pow 2 20)); vm_compute; reflexivity.

(** ** The six examples of PX86.md *)

(** Locations; [x] and [y] on lines 0 and 1, or both on line 0. *)
Definition x : loc := 0.
Definition y : loc := 1.
Definition r1 : reg := 1.
Definition two_lines (l : loc) : nat := l.
Definition same_line (l : loc) : nat := 0.

Definition x0_y1 : outcome := Outcome [(x, 0); (y, 1)] [].

(** Decides the closure and the absence of the outcome by computation. *)
Ltac forbid_by_search fuel :=
  match goal with
  | |- ¬ observable ?line ?n ?progs ?O =>
      apply (forbidden_by_invariant line (init n progs) O (explore line fuel [init n progs] []));
      [apply (bool_decide_unpack _); vm_compute; reflexivity
      | apply (bool_decide_unpack _); vm_compute; reflexivity
      | apply (bool_decide_unpack _); vm_compute; reflexivity]
  end.

Ltac allow_by_schedule cs kl :=
  match goal with
  | |- observable ?line ?n ?progs ?O =>
      let r := eval vm_compute in (exec line (init n progs) cs) in
      match r with
      | Some ?s =>
          apply (allowed_by_schedule line (init n progs) O cs s kl);
          [vm_compute; reflexivity | apply (bool_decide_unpack _); vm_compute; reflexivity
          | apply (bool_decide_unpack _); vm_compute; reflexivity]
      end
  end.

(** SS: [store x 1; store y 1], x and y on different lines. *)
Definition ss : list (list instr) := [[IStore x 1; IStore y 1]].

Theorem ss_allowed : observable two_lines 2 ss x0_y1.
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0; Drain 0 0] [0; 1]. Qed.

(** SS+sameline: the same program, x and y on one line: its stores persist
    in the order they became visible. *)
Theorem ss_sameline_forbidden : ¬ observable same_line 1 ss x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem ss_sameline_x1_y0_allowed : observable same_line 1 ss (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0; Drain 0 0] [1]. Qed.

(** clflush: [store x 1; clflush x; store y 1]. *)
Definition clflush_prog : list (list instr) := [[IStore x 1; IClflush x; IStore y 1]].

Theorem clflush_forbidden : ¬ observable two_lines 2 clflush_prog x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem clflush_x1_y0_allowed :
  observable two_lines 2 clflush_prog (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Issue 0; Drain 0 0; Drain 0 0] [1; 0]. Qed.

(** clflushopt: [store x 1; clflushopt x; store y 1]: the store to y may
    become visible, and persist, before the clflushopt takes effect. *)
Definition clflushopt_prog : list (list instr) := [[IStore x 1; IClflushopt x; IStore y 1]].

Theorem clflushopt_allowed : observable two_lines 2 clflushopt_prog x0_y1.
Proof.
  (* store x visible; store y passes the clflushopt of the other line *)
  allow_by_schedule [Issue 0; Issue 0; Issue 0; Drain 0 0; Drain 0 1] [0; 1].
Qed.

(** clflushopt+sfence: [store x 1; clflushopt x; sfence; store y 1]. *)
Definition clflushopt_sfence_prog : list (list instr) :=
  [[IStore x 1; IClflushopt x; ISfence; IStore y 1]].

Theorem clflushopt_sfence_forbidden : ¬ observable two_lines 2 clflushopt_sfence_prog x0_y1.
Proof. forbid_by_search 1000. Qed.

Theorem clflushopt_sfence_x1_y0_allowed :
  observable two_lines 2 clflushopt_sfence_prog (Outcome [(x, 1); (y, 0)] []).
Proof. allow_by_schedule [Issue 0; Issue 0; Drain 0 0] [1; 0]. Qed.

(** MP+clflush: [store x 1 ‖ load r1 x; clflush x; store y 1]: thread 1
    saw x=1, so its clflush covers thread 0's store. *)
Definition mp_clflush_prog : list (list instr) :=
  [[IStore x 1]; [ILoad r1 x; IClflush x; IStore y 1]].

Definition r1_1_x0_y1 : outcome := Outcome [(x, 0); (y, 1)] [(1, r1, 1)].

Theorem mp_clflush_forbidden : ¬ observable two_lines 2 mp_clflush_prog r1_1_x0_y1.
Proof. forbid_by_search 1000. Qed.

(** The two [allow] lines of MP+clflush in PX86.md. *)
Theorem mp_clflush_r1_1_x1_y1_allowed :
  observable two_lines 2 mp_clflush_prog (Outcome [(x, 1); (y, 1)] [(1, r1, 1)]).
Proof.
  allow_by_schedule [Issue 0; Drain 0 0; Issue 1; Issue 1; Issue 1; Drain 1 0; Drain 1 0] [1; 1].
Qed.

Theorem mp_clflush_x0_y0_allowed :
  observable two_lines 2 mp_clflush_prog (Outcome [(x, 0); (y, 0)] []).
Proof. allow_by_schedule (@nil choice) [0; 0]. Qed.
