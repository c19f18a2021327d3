(** * Memento's detectable CAS: the HELP invariant and exactly-once

    Justifies the protocol of detectable CAS of the seed paper (§3,
    Algorithms 1 and 2: LOAD, CAS with its recovery L9–L25, LOADHELP
    L1–L21, with helping as in §3.4), as model-checked by the TLA+ module
    [specs/memento/DetectableCAS.tla], and the implementation
    [impl/perdure-memento/src/cas.rs] ([DetectableCasAtomic::cas] with its
    recovery path, [DetectableCasAtomic::load_help]; OWN's floor in
    [impl/perdure-memento/src/runtime.rs]).  Lines 19–24 of Algorithm 1 follow the
    reconstruction of §3.3's prose and of the authors' Rust code:
      19: t_mmt ≠ 0 ∧ t_mmt < t_own → OK (not the thread's last CAS)
      20: t_mmt ≠ 0 ∧ t_mmt ≥ t_own → redo the second plain CAS
      21–22: the location holds (tid, new) → resume at the flush (L33)
      23–24: t_own < HELP[¬p_own][tid] → resume at the checkpoint (L34)
      otherwise resume the normal execution at the first plain CAS (L25).

    Two parts.

    Part 1 ([Section history]): the §3.4 HELP invariant on an abstract
    history, from the two timestamp facts of §3.4 taken as hypotheses.  The
    thread's successful CASes are numbered 1, 2, ...; the n-th has parity
    [par n] (alternating) and timestamp [ts n] (strictly increasing; [ts 0]
    is the initial OWN).  A help is a pair (m, t_h): a LOADHELP whose
    timestamp t_h was read between two loads that saw the annotation of the
    m-th CAS, and which raised HELP[par m][tid] to t_h (L13).  Assumed
    (§3.4, from x86-TSO happens-before and rdtscp+lfence being serializing):
    (1) ts (m-1) < t_h, and (2) t_h < ts (m+1) when the (m+1)-th CAS has a
    timestamp.  HELP[p][tid] is the largest t_h of the helps of parity p (0
    if none): HELP is only ever raised, by a CAS from the value read (L13).
    Proved: [help_invariant]: ts (n-1) < HELP[par n][tid] iff some m ≥ n
    with [par m = par n] was helped.

    Part 2 ([Section protocol]): a transition system of one thread [me]
    running detectable CASes one after another, with crashes and recovery,
    against any environment: other threads' CASes (any write that neither
    reads nor writes an annotation of [me], [StepEnv]) and helpers of [me]'s
    CASes (Algorithm 2, [StepSee], [StepHelp], [StepClear]).  The state has
    the locations (value, parity, tid), HELP[·][me], the rdtscp clock, and
    [me]'s OWN, LOCAL, program counter and current memento (parity, fail,
    ts).  Interleaving semantics (sequential consistency) with a global
    clock read by rdtscp: in it the two timestamp facts of Part 1 are not
    hypotheses but hold by construction ([i_entries]); their x86-TSO
    justification is §3.4's.  Proved, on every reachable state:
    - [help_iff_helped_reachable]: (a) for the thread's last successful CAS
      n with parity p_n, ts (n-1) < HELP[p_n][me] iff it was helped (no
      later CAS exists yet), and [help_below_own_reachable]: while the
      current invocation has not taken effect, HELP at its parity (¬p_own)
      is ≤ OWN's timestamp -- the two facts L23–L24 rely on;
    - [at_first_cas_not_taken], [first_cas_effect_once], [took_stays]: the
      first plain CAS (L26) is only ever executed by an invocation that has
      not taken effect, and is the only step that makes it take effect, so
      a re-executed CAS never takes effect twice;
    - [returns_ok_iff_took_effect]: (b) an invocation -- in normal
      execution or through the recovery path L9–L25 after any number of
      crashes -- returns OK iff its first plain CAS took effect, and ERR iff
      it did not; [failure_checkpoint_not_taken]: a checkpointed failure is
      reported again; [l19_unreachable]: L19 never fires for the
      invocation being recovered.
    Everything rests on the inductive invariant [inv] ([step_inv],
    [reachable_inv]).

    Deviations from the seed's Algorithm 1, each as in the authors' Rust
    code (and in [impl/perdure-memento]); the first two are used by the
    proof (the invariant fails without them), the third is what makes
    (H-OWN) hold for a thread crash:
    - L29's failure checkpoint carries a fresh rdtscp timestamp, not 0: with
      [encodeTs(Fail, 0)], recovery (L14) sees t_mmt = 0 below LOCAL as soon
      as any earlier operation of the root operation checkpointed, treats
      the memento as stale and re-executes the CAS, which may then succeed:
      the failure would not be detected.
    - L14 treats the memento as this invocation's iff t_mmt > LOCAL (the
      seed: goto 21 iff t_mmt < LOCAL): a memento reused by the next
      iteration of a loop without a checkpoint in between has
      t_mmt = LOCAL and must count as stale.
    - L20 (the thread's last CAS: redo the second plain CAS) also stores
      OWN := (p_mmt, t_mmt), i.e. goes to L36, not L38: after a thread crash
      between L35 and L36, OWN (DRAM, which a thread crash does not reset)
      would otherwise keep the previous CAS's parity and the next CAS would
      reuse parity p_n; a help of the n-th CAS would then make the next
      CAS's recovery (L24) report OK although it never took effect.  In
      the model L35 and L36 are one step (H-OWN), so this store changes
      nothing here; it is argued, not proved.

    Assumptions of the model that the seed's algorithm does not give:
    - (H-OWN) OWN[me] always holds the parity and timestamp of [me]'s last
      successful CAS whose memento checkpoint (L35) persisted; a crash does
      not change it.  The seed re-initialises OWN at application start from
      the CAS mementos only (§3.3 ❶).  After CASMEMENTOCLEAR (§6.3 clears
      the mementos at the end of each root operation) and a full crash, that
      gives OWN timestamp 0 and the default parity: the next CAS may get the
      parity of the last
      one, and HELP[¬p_own][me] may hold the timestamp of an old help, so
      L24 (t_own = 0 < t_help) would report OK for a CAS that never took
      effect ([own_reinit_breaks_exactly_once] exhibits this execution in
      the model).  Exactly-once needs OWN's last value to survive clearing, e.g.
      a persistent per-thread OWN floor written before clearing (what
      [impl/perdure-memento] does with [own_floor]) or re-initialisation
      from something that clearing keeps.
    - (H-ABA) an annotated word identifies the CAS that wrote it: the words
      carry the index of [me]'s successful CAS that installed them, and the
      helper's second CAS (L18) compares it too.  In the implementation this
      is the assumption that [me] never installs the same (value, parity) at
      the same location again while a helper that saw the earlier
      installation is still pending.  Without it, a delayed helper of the
      n-th CAS can remove the annotation of the (n+2)-th CAS (same parity,
      same value, e.g. pointer values A→B, B→A, A→B) with a HELP timestamp
      below t_{n+1}; if [me] then crashes before L35, recovery finds neither
      the annotation (L22) nor a help (L24) and re-executes a CAS that took
      effect.  Pointer values under safe memory reclamation that are never
      re-inserted satisfy it.
    - Persistence is immediate: every store is durable when it is visible
      (the flushes at L33, L12, L16 and the fence at L38 make the decisions
      of recovery read durable values; the reverting of an unflushed second
      plain CAS or of a helper's unflushed L18 CAS by a full crash is not
      modelled).  A full crash is the crash of every thread; helpers may
      abandon their attempt at any point, which covers their crashes.

    Not covered here: replay of earlier completed invocations of the root
    operation (the L19 case; a crash here restarts the recovery of the
    current invocation, with LOCAL as the replay re-establishes it, so L19
    is proved unreachable for it; [DetCasMulti.v] adds the root operations
    of several CASes on top of this model, their replay through L15–L20
    and OWN's re-initialisation, which discharges (H-OWN) there); the result value [cur] returned with
    ERR (it is re-read by LOADHELP at recovery, not checkpointed); the
    LOADHELP retries and PATIENCE (liveness); more than one thread's CASes
    being tracked at once (the others are the environment); the
    linearizability of the location (see [DetCasSpec.v] for the
    crash-free logically atomic specification). *)
From iris.prelude Require Import prelude.
From Coq Require Import Lia.
From perdure.Core Require Import PxPersist.

(** ** Part 1: the HELP invariant on a history *)
Section history.
  (** The parity of the thread's CAS before its first one ([par 0], the
      initial OWN) and the timestamps ([ts 0] is the initial OWN's). *)
  Context (par0 : bool) (ts : nat → nat).
  Context (ts_increasing : ∀ i j, i < j → ts i < ts j).
  (** The number of successful CASes so far: 1 .. N. *)
  Context (N : nat).

  Definition par (n : nat) : bool := xorb par0 (Nat.odd n).

  (** A help (m, t_h) of the m-th CAS with the two timestamp facts of §3.4. *)
  Definition help_ok (h : nat * nat) : Prop :=
    1 ≤ h.1 ≤ N ∧ ts (h.1 - 1) < h.2 ∧ (h.1 < N → h.2 < ts (S h.1)).

  Definition help_val (helps : list (nat * nat)) (p : bool) : nat :=
    foldr (λ h acc, if decide (par h.1 = p) then h.2 `max` acc else acc) 0 helps.

  Lemma help_val_ge helps h : h ∈ helps → h.2 ≤ help_val helps (par h.1).
  Proof.
    induction helps as [|h' helps IH]; [set_solver|].
    rewrite elem_of_cons /=. intros [->|Hin]; [rewrite decide_True //; lia|].
    specialize (IH Hin). destruct (decide _); lia.
  Qed.

  Lemma help_val_witness helps p x :
    x < help_val helps p → ∃ h, h ∈ helps ∧ par h.1 = p ∧ x < h.2.
  Proof.
    induction helps as [|h helps IH]; simpl; [lia|].
    destruct (decide (par h.1 = p)) as [Hp|Hp]; intros Hx.
    - destruct (decide (x < h.2)); [exists h; set_solver|].
      destruct IH as (h' & ? & ? & ?); [lia|]. exists h'; set_solver.
    - destruct IH as (h' & ? & ? & ?); [lia|]. exists h'; set_solver.
  Qed.

  Lemma par_same_gap m n : m < n → par m = par n → m + 2 ≤ n.
  Proof.
    rewrite /par. intros Hlt Hp. destruct (decide (n = S m)) as [->|]; [|lia].
    exfalso. rewrite Nat.odd_succ -Nat.negb_odd in Hp.
    destruct par0, (Nat.odd m); simpl in Hp; congruence.
  Qed.

  (** §3.4: ts (n-1) < HELP[p_n][tid] iff the n-th or a later CAS with
      parity p_n was helped. *)
  Theorem help_invariant helps n :
    Forall help_ok helps → 1 ≤ n ≤ N →
    ts (n - 1) < help_val helps (par n) ↔
      ∃ h, h ∈ helps ∧ n ≤ h.1 ∧ par h.1 = par n.
  Proof.
    intros Hok Hn. rewrite Forall_forall in Hok. split.
    - intros Hlt. destruct (help_val_witness helps (par n) _ Hlt) as (h & Hin & Hp & Hx).
      exists h. split_and!; [done| |done].
      destruct (decide (n ≤ h.1)) as [|Hgt]; [done|exfalso].
      destruct (Hok h Hin) as (Hh & _ & Hnext).
      pose proof (par_same_gap h.1 n ltac:(lia) Hp) as Hgap.
      specialize (Hnext ltac:(lia)).
      destruct (decide (S h.1 = n - 1)) as [Heq|]; [rewrite Heq in Hnext; lia|].
      pose proof (ts_increasing (S h.1) (n - 1) ltac:(lia)). lia.
    - intros (h & Hin & Hle & Hp).
      pose proof (help_val_ge helps h Hin) as Hge. rewrite Hp in Hge.
      destruct (Hok h Hin) as (_ & Hprev & _).
      destruct (decide (n - 1 = h.1 - 1)) as [Heq|]; [rewrite Heq; lia|].
      pose proof (ts_increasing (n - 1) (h.1 - 1) ltac:(lia)). lia.
  Qed.
End history.

(** ** Part 2: the protocol as a transition system *)

(** A location's word: a stable value (parity Even, tid 0) or a value
    annotated by a CAS's first plain CAS with its parity and tid, and (ghost,
    (H-ABA)) the index of the thread's successful CAS that installed it. *)
Inductive word := Clean (v : nat) | Ann (v : nat) (p : bool) (tid : nat) (n : nat).
Global Instance word_eq_dec : EqDecision word.
Proof. solve_decision. Defined.

(** A CAS memento: parity, failure flag, timestamp. *)
Record mword := MW { mpar : bool; mfail : bool; mts : nat }.

(** Where [me] is: between invocations; at the first plain CAS (L25–L26);
    failed (L29–L31); after the first plain CAS (L33–L35: flush,
    checkpoint); at the second plain CAS (L36–L39); returned; in recovery
    reading its memento and the location (L10–L22); in recovery reading HELP
    (L23–L24). *)
Inductive tpc := PIdle | P25 | PFail | P34 | P38 | PDone (ok : bool) | PRec | PRecHelp.

Section protocol.
  Context (me : nat).

  Definition upd_loc (f : nat → word) (l : nat) (w : word) : nat → word :=
    λ l', if decide (l' = l) then w else f l'.
  Definition upd_help (f : bool → nat) (p : bool) (t : nat) : bool → nat :=
    λ p', if decide (p' = p) then t else f p'.

  Definition mine (w : word) : Prop :=
    match w with Ann _ _ tid _ => tid = me | Clean _ => False end.
  Global Instance mine_dec w : Decision (mine w).
  Proof. destruct w; simpl; apply _. Defined.

  (** The state.  Physical: [locs], [help] (HELP[·][me]), [clock] (rdtscp),
      and [me]'s [pc], arguments (location, old, new: stable inputs), memento
      [mmt], [own] (OWN[me]), [local] (LOCAL[me]).  Ghost: [lst], LOCAL at
      the start of the invocation, which the replay re-establishes after a
      crash; [took], whether the current invocation's first plain CAS took
      effect; the thread's last successful CAS: its index [nl], parity
      [lastp], the timestamp [tprev] of the one before it (OWN when it ran
      L6), and its own timestamp [lastts] once checkpointed; [pend], the
      helpers that read a timestamp t between two loads of the annotation
      of CAS n with parity p, as (n, p, t); [helped], those whose CAS on
      HELP (L13) succeeded. *)
  Record state := St {
    locs : nat → word;
    help : bool → nat;
    clock : nat;
    pc : tpc;
    argl : nat;
    argold : nat;
    argnew : nat;
    mmt : mword;
    own : bool * nat;
    local : nat;
    lst : nat;
    took : bool;
    nl : nat;
    lastp : bool;
    tprev : nat;
    lastts : option nat;
    pend : list (nat * bool * nat);
    helped : list (nat * bool * nat);
  }.

  Definition set_locs (s : state) (x : nat → word) : state :=
    St x (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_help (s : state) (x : bool → nat) : state :=
    St (locs s) x (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_clock (s : state) (x : nat) : state :=
    St (locs s) (help s) x (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_pc (s : state) (x : tpc) : state :=
    St (locs s) (help s) (clock s) x (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_argl (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) x (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_argold (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) x (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_argnew (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) x (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_mmt (s : state) (x : mword) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) x (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_own (s : state) (x : bool * nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) x (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_local (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) x (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_lst (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) x (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_took (s : state) (x : bool) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) x (nl s) (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_nl (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) x (lastp s) (tprev s) (lastts s) (pend s) (helped s).
  Definition set_lastp (s : state) (x : bool) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) x (tprev s) (lastts s) (pend s) (helped s).
  Definition set_tprev (s : state) (x : nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) x (lastts s) (pend s) (helped s).
  Definition set_lastts (s : state) (x : option nat) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) x (pend s) (helped s).
  Definition set_pend (s : state) (x : list (nat * bool * nat)) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) x (helped s).
  Definition set_helped (s : state) (x : list (nat * bool * nat)) : state :=
    St (locs s) (help s) (clock s) (pc s) (argl s) (argold s) (argnew s) (mmt s) (own s) (local s) (lst s) (took s) (nl s) (lastp s) (tprev s) (lastts s) (pend s) x.

  (** [simpl] reduces a field of a setter, one setter at a time. *)
  Arguments set_locs _ _ /.
  Arguments set_help _ _ /.
  Arguments set_clock _ _ /.
  Arguments set_pc _ _ /.
  Arguments set_argl _ _ /.
  Arguments set_argold _ _ /.
  Arguments set_argnew _ _ /.
  Arguments set_mmt _ _ /.
  Arguments set_own _ _ /.
  Arguments set_local _ _ /.
  Arguments set_lst _ _ /.
  Arguments set_took _ _ /.
  Arguments set_nl _ _ /.
  Arguments set_lastp _ _ /.
  Arguments set_tprev _ _ /.
  Arguments set_lastts _ _ /.
  Arguments set_pend _ _ /.
  Arguments set_helped _ _ /.

  Inductive step : state → state → Prop :=
  (** A new invocation: stable arguments, and a memento that is fresh,
      cleared, or reused with a timestamp ≤ LOCAL (Requirements 1 and 3). *)
  | StepStart s l o nw stale :
      pc s = PIdle → mts stale ≤ local s →
      step s (set_took (set_lst (set_mmt (set_argnew (set_argold (set_argl
                (set_pc s P25) l) o) nw) stale) (local s)) false)
  (** L26 succeeds: the location held [old] (stable); it now holds [new]
      annotated with ¬p_own and [me]. *)
  | StepCas1Ok s :
      pc s = P25 → locs s (argl s) = Clean (argold s) →
      step s (set_pc (set_lastts (set_tprev (set_lastp (set_nl (set_took
                (set_locs s (upd_loc (locs s) (argl s)
                   (Ann (argnew s) (negb (own s).1) me (S (nl s)))))
                true) (S (nl s))) (negb (own s).1)) (own s).2) None) P34)
  (** L26 fails and LOADHELP's value is not [old] (L27–L28). *)
  | StepCas1Fail s :
      pc s = P25 → locs s (argl s) ≠ Clean (argold s) → step s (set_pc s PFail)
  (** L29–L31: checkpoint the failure with a fresh timestamp, return ERR. *)
  | StepFail s :
      pc s = PFail →
      step s (set_pc (set_clock (set_local (set_mmt s (MW false true (clock s)))
                (clock s)) (S (clock s))) (PDone false))
  (** L33–L36: flush the location; checkpoint (¬p_own, rdtscp); OWN := it. *)
  | StepCkpt s :
      pc s = P34 →
      step s (set_pc (set_clock (set_lastts (set_own (set_mmt s
                (MW (negb (own s).1) false (clock s)))
                (negb (own s).1, clock s)) (Some (clock s))) (S (clock s))) P38)
  (** L37–L39: the second plain CAS (it fails if a helper did it); LOCAL := the
      memento's timestamp; return OK. *)
  | StepCas2 s :
      pc s = P38 →
      step s (set_pc (set_local (set_locs s
                (if decide (locs s (argl s) = Ann (argnew s) (own s).1 me (nl s))
                 then upd_loc (locs s) (argl s) (Clean (argnew s)) else locs s))
                (mts (mmt s))) (PDone true))
  | StepNext s r : pc s = PDone r → step s (set_pc s PIdle)
  (** A crash of [me] (alone, or with all threads): DRAM and the program
      counter are lost; the replay of the root operation re-establishes LOCAL
      as it was at the start of the invocation and re-executes it with
      [recovery] set.  OWN follows (H-OWN). *)
  | StepCrash s : pc s ≠ PIdle → step s (set_local (set_pc s PRec) (lst s))
  (** L14–L17: the memento is this invocation's and a failure: ERR again. *)
  | StepRecFail s :
      pc s = PRec → local s < mts (mmt s) → mfail (mmt s) = true →
      step s (set_pc (set_local s (mts (mmt s))) (PDone false))
  (** L19: a success that is not the thread's last CAS: OK. *)
  | StepRecNotLast s :
      pc s = PRec → local s < mts (mmt s) → mfail (mmt s) = false →
      mts (mmt s) < (own s).2 →
      step s (set_pc (set_local s (mts (mmt s))) (PDone true))
  (** L20: the thread's last CAS: OWN := the memento (as L36), redo L38. *)
  | StepRecLast s :
      pc s = PRec → local s < mts (mmt s) → mfail (mmt s) = false →
      (own s).2 ≤ mts (mmt s) →
      step s (set_pc (set_own s (mpar (mmt s), mts (mmt s))) P38)
  (** L21–L22: the location holds [new] annotated with [me]: resume at L33. *)
  | StepRecLoc s p n :
      pc s = PRec → mts (mmt s) ≤ local s →
      locs s (argl s) = Ann (argnew s) p me n →
      step s (set_pc s P34)
  | StepRecNoLoc s :
      pc s = PRec → mts (mmt s) ≤ local s →
      (∀ p n, locs s (argl s) ≠ Ann (argnew s) p me n) →
      step s (set_pc s PRecHelp)
  (** L23–L24: helped: resume at L34. *)
  | StepRecHelped s :
      pc s = PRecHelp → (own s).2 < help s (negb (own s).1) → step s (set_pc s P34)
  (** L25: resume the normal execution. *)
  | StepRecNotHelped s :
      pc s = PRecHelp → help s (negb (own s).1) ≤ (own s).2 → step s (set_pc s P25)
  (** Other threads: any write that neither overwrites nor installs an
      annotation of [me] (their first plain CASes expect a stable value). *)
  | StepEnv s l w :
      ¬ mine (locs s l) → ¬ mine w → step s (set_locs s (upd_loc (locs s) l w))
  (** A helper (Algorithm 2): loaded [me]'s annotation (L2 or L5), read
      rdtscp (L4), loaded the same word again (L5–L8): as one step, the
      timestamp taken while the annotation is there. *)
  | StepSee s l v p n :
      locs s l = Ann v p me n →
      step s (set_clock (set_pend s ((n, p, clock s) :: pend s)) (S (clock s)))
  (** L10–L16: HELP[p][me] read below t and raised to t by a CAS. *)
  | StepHelp s n p t :
      (n, p, t) ∈ pend s → help s p < t →
      step s (set_helped (set_help s (upd_help (help s) p t)) ((n, p, t) :: helped s))
  (** L17–L18: the helper's second plain CAS, from the word it loaded. *)
  | StepClear s l v p n t :
      locs s l = Ann v p me n → (n, p, t) ∈ helped s →
      step s (set_locs s (upd_loc (locs s) l (Clean v)))
  (** Other threads' rdtscp. *)
  | StepTick s : step s (set_clock s (S (clock s))).

  Definition init : state :=
    St (λ _, Clean 0) (λ _, 0) 1 PIdle 0 0 0 (MW false false 0) (true, 0) 0 0
       false 0 true 0 (Some 0) [] [].

  Definition reachable (s : state) : Prop := rtc step init s.

  (** ** The invariant *)
  Definition entry_ok (s : state) (e : nat * bool * nat) : Prop :=
    let '(n, p, t) := e in
    n ≤ nl s ∧ t < clock s ∧
    (n = nl s → p = lastp s ∧ tprev s < t) ∧
    (S n = nl s → p = negb (lastp s) ∧ ∀ t2, lastts s = Some t2 → t < t2) ∧
    (S (S n) ≤ nl s → t < tprev s).

  Record inv (s : state) : Prop := {
    i_clock : tprev s < clock s ∧ local s < clock s ∧ lst s < clock s ∧
              mts (mmt s) < clock s;
    i_lastts : ∀ t, lastts s = Some t → tprev s ≤ t ∧ t < clock s;
    i_own : (lastts s = None ∧ took s = true ∧ own s = (negb (lastp s), tprev s)) ∨
            (∃ t, lastts s = Some t ∧ own s = (lastp s, t));
    i_entries : ∀ e, e ∈ pend s ++ helped s → entry_ok s e;
    i_help_val : ∀ p, help s p = 0 ∨ ∃ n t, (n, p, t) ∈ helped s ∧ help s p = t;
    i_help_ge : ∀ n p t, (n, p, t) ∈ helped s → t ≤ help s p;
    i_loc : ∀ l v p tid n, locs s l = Ann v p tid n → tid = me →
              l = argl s ∧ v = argnew s ∧ p = lastp s ∧ n = nl s ∧ took s = true ∧
              (pc s = P34 ∨ pc s = P38 ∨ pc s = PRec);
    i_unhelped : took s = true → lastts s = None →
              locs s (argl s) ≠ Ann (argnew s) (lastp s) me (nl s) →
              ∃ t, (nl s, lastp s, t) ∈ helped s;
    i_p25 : pc s = P25 ∨ pc s = PFail → took s = false ∧ mts (mmt s) ≤ lst s;
    i_p34 : pc s = P34 → took s = true ∧ lastts s = None ∧ mts (mmt s) ≤ lst s;
    i_p38 : pc s = P38 ∨ pc s = PDone true →
            took s = true ∧ lastts s = Some (mts (mmt s)) ∧ mfail (mmt s) = false ∧
            lst s < mts (mmt s) ∧ mpar (mmt s) = lastp s;
    i_fail : pc s = PDone false → took s = false ∧ mfail (mmt s) = true ∧ lst s < mts (mmt s);
    i_rec : pc s = PRec →
            local s = lst s ∧
            (lst s < mts (mmt s) →
               (mfail (mmt s) = true ∧ took s = false) ∨
               (mfail (mmt s) = false ∧ took s = true ∧ lastts s = Some (mts (mmt s)) ∧
                mpar (mmt s) = lastp s)) ∧
            (mts (mmt s) ≤ lst s → took s = true → lastts s = None);
    i_rechelp : pc s = PRecHelp →
            local s = lst s ∧ mts (mmt s) ≤ lst s ∧
            (took s = true → lastts s = None ∧ ∃ t, (nl s, lastp s, t) ∈ helped s);
    i_idle : pc s = PIdle → ∃ t, lastts s = Some t;
  }.

  Lemma inv_init : inv init.
  Proof.
    split; rewrite /init /=; try done.
    all: first [ lia | (intros t [= <-]; lia) | (right; by eexists) | (intros; by left)
               | (intros ? ? ? ? ? [=]) | (intros; by eexists) | (intros; set_solver)
               | (intros; done) ].
  Qed.

  (** The two facts recovery's L23–L24 relies on (part (a) for the model). *)
  Lemma help_below_own s :
    inv s → took s = false → help s (negb (own s).1) ≤ (own s).2.
  Proof.
    intros Hi Htook. destruct (i_own s Hi) as [(_ & ? & _)|(tl & Hl & Hown)]; [congruence|].
    rewrite Hown /=. destruct (i_help_val s Hi (negb (lastp s))) as [->|(n & t & Hin & ->)]; [lia|].
    destruct (i_entries s Hi (n, negb (lastp s), t)) as (Hn & _ & Heq & Hs1 & Hs2);
      [set_solver|].
    destruct (decide (n = nl s)) as [->|].
    { destruct (Heq eq_refl) as [Hp _]. by destruct (lastp s). }
    destruct (decide (S n = nl s)) as [Hsn|].
    { destruct (Hs1 Hsn) as [_ Hlt]. specialize (Hlt tl Hl). lia. }
    specialize (Hs2 ltac:(lia)). destruct (i_lastts s Hi tl Hl). lia.
  Qed.

  Lemma help_iff_helped s :
    inv s → took s = true →
    tprev s < help s (lastp s) ↔ ∃ t, (nl s, lastp s, t) ∈ helped s.
  Proof.
    intros Hi Htook. split.
    - destruct (i_help_val s Hi (lastp s)) as [->|(n & t & Hin & ->)]; [lia|].
      intros Hlt.
      destruct (i_entries s Hi (n, lastp s, t)) as (Hn & _ & Heq & Hs1 & Hs2); [set_solver|].
      destruct (decide (n = nl s)) as [->|]; [by exists t|].
      destruct (decide (S n = nl s)) as [Hsn|].
      { destruct (Hs1 Hsn) as [Hp _]. by destruct (lastp s). }
      specialize (Hs2 ltac:(lia)). lia.
    - intros [t Hin]. pose proof (i_help_ge s Hi _ _ _ Hin).
      destruct (i_entries s Hi (nl s, lastp s, t)) as (_ & _ & Heq & _); [set_solver|].
      destruct (Heq eq_refl). lia.
  Qed.

  Lemma entry_ok_mono s s' e :
    entry_ok s e → nl s' = nl s → lastp s' = lastp s → tprev s' = tprev s →
    lastts s' = lastts s → clock s ≤ clock s' → entry_ok s' e.
  Proof.
    destruct e as [[n p] t]. rewrite /entry_ok.
    intros (? & ? & H1 & H2 & H3) -> -> -> -> ?. split_and!; auto with lia.
  Qed.

  (** Entries survive any step that keeps the last success and does not
      move the clock back. *)
  Ltac entries_mono Hent :=
    let e := fresh "e" in let He := fresh "He" in
    intros e He; eapply entry_ok_mono; [apply Hent; set_solver|..]; simpl; auto with lia.

  Ltac close_easy :=
    solve [intros; repeat match goal with H : _ ∨ _ |- _ => destruct H end; congruence].

  Lemma step_inv s s' : inv s → step s s' → inv s'.
  Proof.
    intros Hi Hstep. pose proof Hi as Hi0.
    destruct Hi as [Hc Hlts Hown Hent Hhv Hhg Hloc Hunh H25 H34 H38 Hfail Hrec Hrh Hidle].
    destruct Hc as (Hc1 & Hc2 & Hc3 & Hc4).
    destruct Hstep as [s l o nw stale Hpc Hst | s Hpc Hl | s Hpc Hl | s Hpc | s Hpc
      | s Hpc | s r Hpc | s Hpc | s Hpc Hlt Hf | s Hpc Hlt Hf Hown' | s Hpc Hlt Hf Hown'
      | s p n Hpc Hle Hl | s Hpc Hle Hl | s Hpc Hh | s Hpc Hh | s l w Hm Hw
      | s l v p n Hl | s n p t Hin Hlt | s l v p n t Hl Hin | s ].
    - (* StepStart *)
      destruct (Hidle Hpc) as [t0 Ht0].
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + split_and!; lia.
      + destruct Hown as [(? & _)|?]; [congruence|by right].
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
    - (* StepCas1Ok *)
      destruct (H25 (or_introl Hpc)) as [Htook Hmts].
      destruct Hown as [(_ & ? & _)|(tl & Htl & Hown)]; [congruence|].
      destruct (Hlts tl Htl) as [Htp Htl'].
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + rewrite Hown /=. split_and!; lia.
      + left. rewrite Hown /= negb_involutive //.
      + intros [[n p] t] He. destruct (Hent _ He) as (Hn & Ht & Heq & Hs1 & Hs2).
        rewrite /entry_ok /= Hown /=. split_and!; [lia|done|intros; exfalso; lia| |].
        * intros Heqn. injection Heqn as Heqn. destruct (Heq Heqn) as [-> _].
          split; [by rewrite negb_involutive|]. by intros t2 [=].
        * intros ?. destruct (decide (S n = nl s)) as [Hsn|].
          { destruct (Hs1 Hsn) as [_ Hlt]. by apply Hlt. }
          specialize (Hs2 ltac:(lia)). lia.
      + intros l' v p tid n Hw ->. rewrite /upd_loc in Hw.
        destruct (decide (l' = argl s)) as [->|Hne].
        * injection Hw as <- <- <-. rewrite Hown. split_and!; [done.. | by left].
        * destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
          rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
      + intros _ _ Hne. exfalso. apply Hne. rewrite /upd_loc decide_True //.
    - (* StepCas1Fail *)
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
      + intros _. by apply H25; left.
    - (* StepFail *)
      destruct (H25 (or_intror Hpc)) as [Htook Hmts].
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + split_and!; lia.
      + intros t Ht. destruct (Hlts t Ht). lia.
      + entries_mono Hent.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
    - (* StepCkpt *)
      destruct (H34 Hpc) as (Htook & Hnone & Hmts).
      destruct Hown as [(_ & _ & Hown)|(? & ? & _)]; [|congruence].
      rewrite Hown /=.
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + split_and!; lia.
      + intros t [= <-]. lia.
      + right. eexists; split; [done|]. by rewrite negb_involutive.
      + intros [[n p] t] He. destruct (Hent _ He) as (Hn & Ht & Heq & Hs1 & Hs2).
        rewrite /entry_ok /=. split_and!; [lia|lia|done| |done].
        intros Hsn. destruct (Hs1 Hsn) as [Hp _]. split; [done|]. intros t2 [= <-]. lia.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (? & ? & ? & ? & ? & _).
        split_and!; auto.
      + intros _. rewrite negb_involutive. split_and!; (done || lia).
    - (* StepCas2 *)
      destruct (H38 (or_introl Hpc)) as (Htook & Hsome & Hf & Hlt & Hmp).
      destruct Hown as [(? & _)|(t & Ht & Hown)]; [congruence|].
      rewrite Hsome in Ht. injection Ht as <-.
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + right. eexists; split; [exact Hsome|exact Hown].
      + intros l' v p tid n Hw ->. exfalso.
        destruct (decide (locs s (argl s) = _)) as [Heq|Hne].
        * rewrite /upd_loc in Hw. destruct (decide (l' = argl s)); [done|].
          destruct (Hloc _ _ _ _ _ Hw eq_refl) as (? & _). done.
        * destruct (Hloc _ _ _ _ _ Hw eq_refl) as (-> & -> & -> & -> & _).
          apply Hne. by rewrite Hw Hown.
    - (* StepNext *)
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
      + intros _. destruct r.
        * destruct (H38 (or_intror Hpc)) as (_ & ? & _). by eexists.
        * destruct (Hfail Hpc) as (Htook & _). destruct Hown as [(_ & ? & _)|(t & ? & _)];
            [congruence|by eexists].
    - (* StepCrash *)
      split; simpl; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (? & ? & ? & ? & ? & _).
        split_and!; auto.
      + intros _. split; [done|]. destruct (pc s) eqn:Hp.
        * done.
        * destruct (H25 (or_introl eq_refl)). split; [lia|congruence].
        * destruct (H25 (or_intror eq_refl)). split; [lia|congruence].
        * destruct (H34 eq_refl) as (? & ? & ?). split; [lia|done].
        * destruct (H38 (or_introl eq_refl)) as (? & ? & ? & ? & ?).
          split; [intros _; right; by split_and! | lia].
        * destruct ok.
          { destruct (H38 (or_intror eq_refl)) as (? & ? & ? & ? & ?).
            split; [intros _; right; by split_and! | lia]. }
          { destruct (Hfail eq_refl) as (? & ? & ?). split; [intros _; by left | lia]. }
        * by destruct (Hrec eq_refl) as (_ & ? & ?).
        * destruct (Hrh eq_refl) as (_ & ? & Ht). split; [lia|].
          intros _ Htk. by destruct (Ht Htk).
    - (* StepRecFail *)
      destruct (Hrec Hpc) as (Hloc' & Hcur & _). rewrite Hloc' in Hlt.
      destruct (Hcur Hlt) as [(_ & Htook)|(? & _)]; [|congruence].
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & ? & _).
        congruence.
    - (* StepRecNotLast: unreachable *)
      exfalso. destruct (Hrec Hpc) as (Hloc' & Hcur & _). rewrite Hloc' in Hlt.
      destruct (Hcur Hlt) as [(? & _)|(_ & _ & Hsome & _)]; [congruence|].
      destruct Hown as [(? & _)|(t & Ht & Hown)]; [congruence|].
      rewrite Hsome in Ht. injection Ht as <-. rewrite Hown /= in Hown'. lia.
    - (* StepRecLast *)
      destruct (Hrec Hpc) as (Hloc' & Hcur & _). rewrite Hloc' in Hlt.
      destruct (Hcur Hlt) as [(? & _)|(_ & Htook & Hsome & Hmp)]; [congruence|].
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + right. rewrite Hmp. by eexists.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (? & ? & ? & ? & ? & _).
        split_and!; auto.
    - (* StepRecLoc *)
      destruct (Hrec Hpc) as (Hloc' & _ & Hstale). rewrite Hloc' in Hle.
      destruct (Hloc _ _ _ _ _ Hl eq_refl) as (_ & _ & _ & _ & Htook & _).
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (? & ? & ? & ? & ? & _).
        split_and!; auto.
      + intros _. split_and!; auto.
    - (* StepRecNoLoc *)
      destruct (Hrec Hpc) as (Hloc' & _ & Hstale). rewrite Hloc' in Hle.
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros l' v p tid n Hw ->. exfalso.
        destruct (Hloc _ _ _ _ _ Hw eq_refl) as (-> & -> & _). by eapply Hl.
      + intros _. split_and!; [done|done|]. intros Htook.
        pose proof (Hstale Hle Htook) as Hnone. split; [done|]. apply Hunh; [done|done|].
        apply Hl.
    - (* StepRecHelped *)
      destruct (Hrh Hpc) as (Hl' & Hle & Hth).
      assert (Htook : took s = true).
      { destruct (took s) eqn:Ht; [done|]. exfalso.
        pose proof (help_below_own s Hi0 Ht). lia. }
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
      + intros _. destruct (Hth Htook). split_and!; done.
    - (* StepRecNotHelped *)
      destruct (Hrh Hpc) as (Hl' & Hle & Hth).
      assert (Htook : took s = false).
      { destruct (took s) eqn:Ht; [|done]. exfalso.
        destruct (Hth eq_refl) as [Hnone Hhelped].
        destruct Hown as [(_ & _ & Hown)|(? & ? & _)]; [|congruence].
        rewrite Hown /= negb_involutive in Hh.
        pose proof (proj2 (help_iff_helped s Hi0 Ht) Hhelped). lia. }
      split; simpl; rewrite ?Hpc; try done; try close_easy.
      + intros ? ? ? ? ? Hw ->. destruct (Hloc _ _ _ _ _ Hw eq_refl) as (_ & _ & _ & _ & _ & Hp).
        rewrite Hpc in Hp. destruct Hp as [?|[?|?]]; congruence.
    - (* StepEnv *)
      split; simpl; try done; try close_easy.
      + intros l' v p tid n Hw' ->. rewrite /upd_loc in Hw'.
        destruct (decide (l' = l)) as [->|]; [subst w; done|].
        by apply Hloc in Hw'.
      + intros Htook Hnone Hne. apply Hunh; [done|done|]. rewrite /upd_loc in Hne.
        destruct (decide (argl s = l)) as [->|]; [|done].
        intros Heq. apply Hm. by rewrite Heq.
    - (* StepSee *)
      destruct (Hloc _ _ _ _ _ Hl eq_refl) as (-> & -> & -> & -> & Htook & _).
      split; simpl; try done; try close_easy.
      + split_and!; lia.
      + intros t Ht. destruct (Hlts t Ht). lia.
      + intros e He. simpl in He. rewrite elem_of_cons in He.
        destruct He as [->|He].
        * rewrite /entry_ok /=. split_and!; try lia. done.
        * eapply entry_ok_mono; [by apply Hent|..]; simpl; auto with lia.
    - (* StepHelp *)
      split; simpl; try done; try close_easy.
      + intros e He. rewrite elem_of_app elem_of_cons in He.
        eapply entry_ok_mono; [apply Hent|..]; try done.
        rewrite elem_of_app. destruct He as [?|[->|?]]; [by left|by left|by right].
      + intros p'. rewrite /upd_help. destruct (decide (p' = p)) as [->|].
        * right. exists n, t. split; [apply elem_of_cons; by left|done].
        * destruct (Hhv p') as [?|(n' & t' & ? & ?)]; [by left|].
          right. exists n', t'. split; [apply elem_of_cons; by right|done].
      + intros n' p' t' Hin'. rewrite /upd_help. rewrite elem_of_cons in Hin'.
        destruct Hin' as [[= -> -> ->]|Hin']; [by rewrite decide_True|].
        pose proof (Hhg _ _ _ Hin'). destruct (decide (p' = p)) as [->|]; lia.
      + intros ? ? ?. destruct (Hunh ltac:(done) ltac:(done) ltac:(done)) as [t' ?].
        exists t'. apply elem_of_cons; by right.
      + intros Hp. destruct (Hrh Hp) as (? & ? & Hth). split_and!; [done|done|].
        intros Ht. destruct (Hth Ht) as [? [t' ?]]. split; [done|]. exists t'.
        apply elem_of_cons; by right.
    - (* StepClear *)
      destruct (Hloc _ _ _ _ _ Hl eq_refl) as (-> & -> & -> & -> & Htook & _).
      split; simpl; try done; try close_easy.
      + intros l' v' p' tid n' Hw ->. rewrite /upd_loc in Hw.
        destruct (decide (l' = argl s)); [done|]. by apply Hloc in Hw.
      + intros _ _ _. by exists t.
    - (* StepTick *)
      split; simpl; try done; try close_easy.
      + split_and!; lia.
      + intros t Ht. destruct (Hlts t Ht). lia.
      + entries_mono Hent.
  Qed.

  Lemma reachable_inv s : reachable s → inv s.
  Proof.
    intros Hr. assert (∀ s1 s2, rtc step s1 s2 → inv s1 → inv s2) as Hgen.
    { intros s1 s2 H. induction H as [|s1 s1' s2 Hstep _ IH]; [done|].
      intros Hi. apply IH. by eapply step_inv. }
    apply (Hgen init); [done|apply inv_init].
  Qed.

  (** ** The theorems *)

  (** (a), as recovery uses it: for the thread's last successful CAS [n]
      (parity [lastp], OWN's timestamp before it [tprev]), ts (n-1) < HELP[p_n]
      iff it was helped; and while the current invocation has not taken
      effect, HELP at its parity (¬p_own) is at most OWN's timestamp. *)
  Theorem help_iff_helped_reachable s :
    reachable s → took s = true →
    tprev s < help s (lastp s) ↔ ∃ t, (nl s, lastp s, t) ∈ helped s.
  Proof. intros Hr. apply help_iff_helped, reachable_inv, Hr. Qed.

  Theorem help_below_own_reachable s :
    reachable s → took s = false → help s (negb (own s).1) ≤ (own s).2.
  Proof. intros Hr. apply help_below_own, reachable_inv, Hr. Qed.

  (** The first plain CAS (L26) is executed only by an invocation that has
      not taken effect -- in normal execution or resumed there by recovery. *)
  Theorem at_first_cas_not_taken s :
    reachable s → pc s = P25 → took s = false.
  Proof. intros Hr Hpc. by apply (i_p25 s (reachable_inv s Hr)); left. Qed.

  (** Hence an invocation takes effect at most once: once taken, [took]
      stays set until the next invocation starts, and the only step that
      sets it is the first plain CAS, from L25 (where it is unset). *)
  Theorem took_stays s s' : step s s' → took s = true → took s' = true ∨ pc s = PIdle.
  Proof. intros Hstep Ht. destruct Hstep; simpl; auto. Qed.

  Theorem first_cas_effect_once s s' :
    step s s' → took s = false → took s' = true → pc s = P25.
  Proof. intros Hstep Ht Ht'. destruct Hstep; simpl in *; congruence. Qed.

  (** (b) exactly-once: an invocation returns OK iff its first plain CAS took
      effect, ERR iff it did not -- whether it returns from the normal
      execution or from the recovery path after any number of crashes. *)
  Theorem returns_ok_iff_took_effect s ok :
    reachable s → pc s = PDone ok → ok = took s.
  Proof.
    intros Hr Hpc. pose proof (reachable_inv s Hr) as Hi. destruct ok.
    - by destruct (i_p38 s Hi (or_intror Hpc)) as [-> _].
    - by destruct (i_fail s Hi Hpc) as [-> _].
  Qed.

  (** The failure, once checkpointed, is what recovery reports: from a
      state whose memento is this invocation's failure, the invocation has
      not taken effect. *)
  Theorem failure_checkpoint_not_taken s :
    reachable s → pc s = PRec → lst s < mts (mmt s) → mfail (mmt s) = true → took s = false.
  Proof.
    intros Hr Hpc Hlt Hf. destruct (i_rec s (reachable_inv s Hr) Hpc) as (_ & Hcur & _).
    destruct (Hcur Hlt) as [[_ ?]|[? _]]; [done|congruence].
  Qed.

  (** L19 is unreachable for the invocation being recovered. *)
  Theorem l19_unreachable s :
    reachable s → pc s = PRec → local s < mts (mmt s) → mfail (mmt s) = false →
    ¬ mts (mmt s) < (own s).2.
  Proof.
    intros Hr Hpc Hlt Hf Hown. pose proof (reachable_inv s Hr) as Hi.
    destruct (i_rec s Hi Hpc) as (Hl & Hcur & _). rewrite Hl in Hlt.
    destruct (Hcur Hlt) as [(? & _)|(_ & _ & Hsome & _)]; [congruence|].
    destruct (i_own s Hi) as [(? & _)|(t & Ht & Ho)]; [congruence|].
    rewrite Hsome in Ht. injection Ht as <-. rewrite Ho /= in Hown. lia.
  Qed.
End protocol.

(** ** Why (H-OWN) is needed: OWN re-initialised from cleared mementos

    [step_reinit] adds to the model a full crash between invocations after
    CASMEMENTOCLEAR, which re-initialises OWN from the (cleared) mementos as
    §3.3 ❶ does: OWN = (the initial parity, 0).  Then the thread's first CAS
    (helped, completed) leaves HELP[Even][me] = 1; after the re-initialisation
    the next CAS gets the same parity, crashes before its first plain CAS,
    and its recovery finds t_own = 0 < HELP = 1 at L24: it resumes at L34
    and returns OK although its first plain CAS never took effect. *)
Inductive step_reinit (me : nat) : state → state → Prop :=
  | SRStep s s' : step me s s' → step_reinit me s s'
  | SRReinit s : pc s = PIdle → step_reinit me s (set_own s (true, 0)).

Lemma rtc_l_eq {A} (R : relation A) x y y' z : R x y → y = y' → rtc R y' z → rtc R x z.
Proof. intros ? -> ?. by eapply rtc_l. Qed.

(** [norm_state] ([PxPersist.v], whose explicit-run tactics this model
    shares) replaces the state reached by its normal form, so that the terms
    of the trace do not grow with its length. *)

Lemma own_reinit_breaks_exactly_once :
  ∃ s, rtc (step_reinit 1) init s ∧ pc s = PDone true ∧ took s = false.
Proof.
  eexists. split; [|split].
  - (* CAS(0 → 1) by thread 1: first plain CAS, helped, checkpointed, done *)
    eapply rtc_l_eq; [apply SRStep; apply (StepStart 1 _ 0 0 1 (MW false false 0));
                   [by vm_compute|vm_compute; lia]|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCas1Ok; by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply (StepSee 1 _ 0 1 false 1); by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply (StepHelp 1 _ 1 false 1);
                   [vm_compute; constructor|vm_compute; lia]|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCkpt; by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCas2; by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply (StepNext 1 _ true); by vm_compute|norm_state|].
    (* CASMEMENTOCLEAR, full crash: OWN from the cleared mementos *)
    eapply rtc_l_eq; [apply SRReinit; by vm_compute|norm_state|].
    (* CAS(5 → 7): crashes before its first plain CAS *)
    eapply rtc_l_eq; [apply SRStep; apply (StepStart 1 _ 0 5 7 (MW false false 0));
                   [by vm_compute|vm_compute; lia]|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCrash; by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepRecNoLoc;
                   [by vm_compute|vm_compute; lia|intros p n; vm_compute; discriminate]|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepRecHelped; [by vm_compute|vm_compute; lia]|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCkpt; by vm_compute|norm_state|].
    eapply rtc_l_eq; [apply SRStep; apply StepCas2; by vm_compute|norm_state|].
    apply rtc_refl.
  - by vm_compute.
  - by vm_compute.
Qed.
