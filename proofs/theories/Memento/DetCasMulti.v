(** * Memento's detectable CAS: root operations of several CASes, replayed

    [DetCas.v]'s Part 2 is the protocol of one tracked thread [me] running
    detectable CASes (seed 001 §3, Algorithm 1 L5–L39, recovery L9–L25)
    against any environment of other writers and helpers (Algorithm 2),
    with immediate persistence.  Its crash step abstracts the replay of a
    root operation: a crash re-runs the current invocation with LOCAL as the
    replay "re-establishes it", and L19 (⑤) is proved unreachable there.
    This file adds the root-operation layer on top of that model, as the
    crate's composites and runtime run it, and keeps [DetCas.v]'s steps for
    the CAS that is being executed:
    - a root operation ([impl/perdure-memento/src/runtime.rs]
      [Handle::try_run_root]) is a list of K ≥ 1 detectable CASes
      ([ops]: location, old, new; stable inputs, seed §2.3 Requirement 2),
      run in order, CAS [j] with its own CAS memento, slot [j] of the root
      memento ([mmts j]; [cas.rs] [CasMmt], one field per call site,
      [compose.rs] Requirement 1): the shape of a root operation that runs
      several CASes, each with its own [CasMmt] field (as [ResizeMmt]'s
      [mark], [place.cas] and [swap] in [impl/perdure-memento/src/ds/clevel.rs],
      there with checkpoints between them).  The crate's loops (the Treiber
      stack, MSQ-mmt-cas, the elimination stack: [Handle::detectable_loop])
      have one CAS memento per root operation, reused by each iteration
      after the loop's φ checkpoint raises LOCAL: that pattern is not this
      model (below);
    - LOCAL ([Handle::local]) starts at the root operation's floor
      ([try_run_root]: [self.set_local(floor)]) and each CAS that returns
      raises it to its memento's timestamp ([cas.rs] L39
      [h.set_local(ts_succ)], the failure path's [h.set_local(ts_fail)],
      and recovery's ④ ⑤ ⑥ [h.set_local(m.ts)]);
    - the commit ([try_run_root] step 3, [ClearMode::Floor], the default)
      writes the next floor [now], later than every timestamp the operation
      checkpointed: that is how the runtime clears the root memento between
      root operations (the mementos keep their words; the next operation's
      strict L14, [m.ts > t_local], finds them all stale);
    - OWN ([rt.own], DRAM) survives a thread crash; a full crash
      re-initialises it as [Runtime::open] does ([compose.rs] [Scan::cas]):
      the newest of [own_floor] (written by the commit, [ST_OWN_FLOOR]) and
      the successful checkpoints of the root memento's [NS] CAS slots
      ([own_scan]);
    - a crash (a thread crash, or a full crash: with immediate persistence
      both lose DRAM's program counter and LOCAL and keep the memory) makes
      the thread re-run the root operation from its first CAS in recovery
      mode ([h.rec()], [try_run_root]'s retry loop, [Runtime::open]'s
      [needs_recovery]): each CAS runs its recovery L9–L25 against its own
      memento.  A CAS that returned before the crash meets ④ (its failure
      checkpointed: ERR again), ⑤ (a success that is not the thread's last
      CAS: OK without touching memory) or ⑥ (the thread's last success:
      redo the second plain CAS, OK); the first CAS that had not returned
      runs [DetCas.v]'s recovery (③ then ⑦ ⑧ ⑨, or ④ ⑥), and ⑨ leaves
      recovery mode ([h.set_rec(false)]) for the CASes after it.

    The state ([mstate]) is [DetCas.v]'s state ([core]: memory, HELP, the
    clock, OWN, and the running CAS's program counter, arguments, memento
    and LOCAL, with [DetCas.v]'s ghosts) plus the root operation's CASes, the
    position [cur] of the CAS the thread runs, the program counter [rpc]
    and LOCAL [rlocal] of a CAS being replayed, the recovery flag, the
    memento slots and the floor; ghost: [fr], the first CAS of the root
    operation that has not returned since it started (the one [core]'s
    invocation is), [res j], the result CAS [j < fr] first returned,
    [ncas j], how many times CAS [j]'s first plain CAS (L26) has run, and
    [hist], per committed root operation, each CAS's result and count.  A
    step ([mstep]) is one of [DetCas.v]'s steps of the running CAS
    ([MThread], when [cur = fr]) or of the environment ([MEnv]), or a step
    of the layer: start ([MStart]), the next CAS ([MAdvance]), the commit
    ([MCommit]), a crash ([MCrash], thread or full; [MCrashIdle], a full
    crash between root operations), and the replay of a CAS that returned
    before the crash ([RRecFail] ④, [RRecNotLast] ⑤, [RRecLast] and
    [RCas2] ⑥, [RNext], [RArrive]).

    Proved, on every reachable state, for any K, any root operations, any
    schedule of the environment, any number of crashes:
    - [detcas_multi_returns]: whenever a CAS of the root operation returns
      [r] -- in normal execution, from its own recovery, or replayed after
      a crash through ④ ⑤ ⑥ -- its first plain CAS has run exactly once if
      [r] is OK and never if [r] is ERR; a replayed CAS returns the result
      it first returned;
    - [detcas_multi_committed]: in every committed root operation, every
      CAS's first plain CAS ran exactly once if it returned OK, never if
      ERR;
    - [detcas_multi_at_most_once]: no CAS's first plain CAS runs twice;
      [detcas_multi_first_cas]: L26 runs only for a CAS whose first plain
      CAS has not run ([ncas] 0): no replay or recovery re-executes a CAS
      that took effect;
    - [detcas_multi_own_reinit]: OWN as a full crash re-initialises it
      ([own_scan]) is OWN's value, in the middle of a root operation and
      between root operations, after the commit's floor made every slot
      stale: [DetCas.v]'s premise (H-OWN) holds in this layer;
    - [detcas_multi_replay_fresh]: a replayed CAS's memento is always newer
      than LOCAL (so ③'s branch, L21–L25, is never taken by a CAS that
      returned before the crash: the model has no step for it);
    - [detcas_multi_replay_case5]: non-vacuity: a root operation of two
      CASes, both succeed, a crash after the second one's checkpoint; the
      replay returns OK for the first through ⑤ (no memory step, its first
      plain CAS run once), the second redoes its second plain CAS through
      ⑥; the root operation commits with both results OK, each CAS's first
      plain CAS run once; [detcas_multi_replay_case6]: the first CAS
      succeeds, the second fails, a thread crash before the commit; the
      replay takes ⑥ for the first (its second plain CAS finds the word
      clean), the second's recovery ④; the commit records (OK, once) and
      (ERR, never).
    Everything rests on [minv] ([minv_init], [mstep_inv], [mreach_inv]):
    [ownok] (OWN, [own_floor] and the slots: OWN is [own_floor] or, newer
    than the floor, some slot's success; no slot's success is newer than
    OWN) and [minv0], which contains [DetCas.v]'s invariant [inv] of the
    core state (not re-proved: each step of the running CAS is a step of [DetCas.v]'s
    model, the layer's start and advance are its [StepNext]/[StepStart]
    (and [StepCrash] when recovery mode is on), the commit its [StepNext]
    and [StepTick], a crash its [StepCrash]; the replay leaves the core
    state unchanged, which [minv] proves: ⑥'s second plain CAS finds no
    annotated word to remove and its OWN store rewrites OWN's value).

    What the model abstracts, beyond [DetCas.v]'s abstractions (immediate
    persistence, one tracked thread, the environment as any writes that do
    not touch [me]'s annotations and Algorithm 2's helpers, (H-ABA) built
    into the words; (H-OWN) is not assumed here but proved,
    [detcas_multi_own_reinit]):
    - the line-granular persistence of [DetCasPx.v] is not modelled here:
      in particular the un-annotated word the second plain CAS writes back
      is fenced only at the next CAS's L26 or the commit in the code, and a
      crash before that can bring back a returned CAS's annotated word;
      that case is the reason for ⑥ and is not exercised here (⑥ is
      exercised with the word still clean);
    - each CAS's memento is its own slot; a memento reused by two CASes of
      one root operation with no checkpoint between them (the gap of
      [impl/perdure-memento/MUTANTS.md], [cas.rs:195:21]) is not a run of
      this model; [ClearMode::Zero] (zeroing the root memento) is not
      modelled, only the floor;
    - the root operation's inputs are fixed when it starts (a composite
      that computes a CAS's arguments from what it loaded checkpoints them
      first, Requirement 2); no loads and no other sub-operations between
      the CASes: in particular no CHECKPOINT, so neither the loops' pattern
      ([Handle::detectable_loop]: a φ checkpoint at each iteration's head,
      one CAS memento reused by every iteration, the replay resuming at the
      last checkpointed iteration) nor the checkpoints of clevel's resize
      are modelled;
    - ④'s LOADHELP of the current value and the value returned with ERR
      are not modelled (as in [DetCas.v]);
    - the commit is one step (its line, floor and [own_floor], persisted
      at once); the root memento is [NS] CAS slots (no other fields); the
      parity of OWN's initial value is [DetCas.v]'s; a thread that is
      idle when the system crashes may start its next root operation in
      recovery mode or not ([MStart]'s flag: both are runs).
    Not covered: the line-granular, N-thread model ([DetCasPx.v],
    [DetCasPxTwoWord.v]) with multi-CAS root operations, and histories of
    [Core/DurableLin.v] for them ([DetCasPxLin.v] has one CAS per root
    operation). *)
From iris.prelude Require Import prelude.
From Coq Require Import Lia.
From perdure.Core Require Import PxPersist.
From perdure.Memento Require Import DetCas.

Global Instance tpc_eq_dec : EqDecision tpc.
Proof. solve_decision. Defined.

(** The state of the layer. *)
Record mstate := MS {
  core : state;                      (* DetCas.v's state; its invocation is CAS [fr] *)
  ops : list (nat * nat * nat);      (* the root operation's CASes: location, old, new *)
  cur : nat;                         (* the CAS the thread runs *)
  rpc : tpc;                         (* the replayed CAS's program counter ([cur < fr]) *)
  rlocal : nat;                      (* LOCAL while replaying *)
  recm : bool;                       (* recovery mode, [h.rec()] *)
  mmts : nat → mword;                (* the CAS memento slots of the root memento *)
  floor : nat;                       (* the root operation's floor (runtime.rs) *)
  fr : nat;                          (* ghost: the first CAS not returned since the start *)
  res : nat → bool;                  (* ghost: the result CAS j < fr first returned *)
  ncas : nat → nat;                  (* ghost: how often CAS j's first plain CAS ran *)
  hist : list (list (bool * nat));   (* ghost: committed root operations' (result, count) *)
  ownfl : bool * nat;                (* [own_floor] (runtime.rs): OWN at the last commit *)
}.

Definition updf {A} (f : nat → A) (j : nat) (a : A) : nat → A :=
  λ i, if decide (i = j) then a else f i.

(** CAS [j] of a root operation. *)
Definition opx (os : list (nat * nat * nat)) (j : nat) : nat * nat * nat := nth j os (0, 0, 0).

Section multi.
  (** [me]: the tracked thread; [NS]: the CAS memento slots of its root
      memento (the root memento's layout, fixed; a root operation uses at
      most [NS] of them). *)
  Context (me NS : nat).

  (** [DetCas.v]'s [StepStart] of CAS (x, o, n) with memento [m]; in
      recovery mode followed by its [StepCrash] (the CAS starts at L9). *)
  Definition start_core (c : state) (x o n : nat) (m : mword) (r : bool) : state :=
    let c2 := set_took (set_lst (set_mmt (set_argnew (set_argold (set_argl
                (set_pc c P25) x) o) n) m) (local c)) false in
    if r then set_local (set_pc c2 PRec) (lst c2) else c2.

  (** The environment's steps: those of [DetCas.v]'s steps that leave [me]'s
      registers (program counter, arguments, memento, OWN, LOCAL) and the
      invocation's ghosts as they are (other threads' writes, helpers, the
      clock). *)
  Definition same_thread (c c' : state) : Prop :=
    pc c' = pc c ∧ argl c' = argl c ∧ argold c' = argold c ∧ argnew c' = argnew c ∧
    mmt c' = mmt c ∧ own c' = own c ∧ local c' = local c ∧ lst c' = lst c ∧ took c' = took c.
  Definition env_step (c c' : state) : Prop := step me c c' ∧ same_thread c c'.

  (** The annotation L20's second plain CAS expects: value [v], parity [p],
      tid [me] (the code compares the word; the ghost index is not read). *)
  Definition ann_of (w : word) (v : nat) (p : bool) : bool :=
    match w with
    | Ann v' p' tid _ => bool_decide (v' = v ∧ p' = p ∧ tid = me)
    | Clean _ => false
    end.

  Definition with_core (s : mstate) (c : state) : mstate :=
    MS c (ops s) (cur s) (rpc s) (rlocal s) (recm s) (mmts s) (floor s) (fr s) (res s) (ncas s) (hist s)
       (ownfl s).
  Definition with_rep (s : mstate) (c : state) (p : tpc) (l : nat) : mstate :=
    MS c (ops s) (cur s) p l (recm s) (mmts s) (floor s) (fr s) (res s) (ncas s) (hist s) (ownfl s).

  (** The root memento's slot [j] as a full crash finds it: the running CAS's
      memento is [core]'s. *)
  Definition slot (s : mstate) (j : nat) : mword :=
    if bool_decide (pc (core s) ≠ PIdle ∧ j = fr s) then mmt (core s) else mmts s j.
  (** OWN at start-up ([Runtime::open], [compose.rs] [Scan::cas]): the newest
      of [own_floor] and the successful CAS checkpoints of the root memento
      (a checkpoint replaces the value found so far iff it is a success with
      a larger timestamp; so timestamp 0 never does). *)
  Definition scan_step (o : bool * nat) (m : mword) : bool * nat :=
    if negb (mfail m) && bool_decide (o.2 < mts m) then (mpar m, mts m) else o.
  Definition own_scan (s : mstate) : bool * nat := foldl scan_step (ownfl s) (slot s <$> seq 0 NS).

  Inductive mstep : mstate → mstate → Prop :=
  (** [Handle::try_run_root]: a new root operation of K ≥ 1 CASes; LOCAL :=
      its floor ([self.set_local(floor)]); CAS 0 starts ([DetCas.v]'s
      [StepStart], its memento slot 0), in recovery mode if [r]. *)
  | MStart s os r : pc (core s) = PIdle → os ≠ [] → length os ≤ NS →
      let c := start_core (set_local (core s) (floor s)) (opx os 0).1.1 (opx os 0).1.2 (opx os 0).2
                 (mmts s 0) r in
      mstep s (MS c os 0 PRec (floor s) r (mmts s) (floor s) 0 (λ _, false) (λ _, 0) (hist s)
                 (ownfl s))
  (** A step of the running CAS ([cas.rs] [DetectableCasAtomic::cas],
      [second_cas]; L9–L39): one of [DetCas.v]'s, other than its start,
      its [StepNext] and its crash.  L26 counts in [ncas]; ⑨ (L25) leaves
      recovery mode ([h.set_rec(false)]). *)
  | MThread s c' : cur s = fr s → step me (core s) c' → pc (core s) ≠ PIdle →
      (∀ r, pc (core s) ≠ PDone r) → pc c' ≠ PRec →
      mstep s (MS c' (ops s) (cur s) (rpc s) (rlocal s)
                 (if bool_decide (pc (core s) = PRecHelp ∧ pc c' = P25) then false else recm s)
                 (mmts s) (floor s) (fr s) (res s)
                 (if bool_decide (pc (core s) = P25 ∧ pc c' = P34)
                  then updf (ncas s) (fr s) (S (ncas s (fr s))) else ncas s) (hist s) (ownfl s))
  (** Other threads and helpers (Algorithm 2), at any time. *)
  | MEnv s c' : env_step (core s) c' → mstep s (with_core s c')
  (** The CAS returned [r]; the next CAS of the root operation starts
      (normal or recovery mode, as the handle is), with its own memento. *)
  | MAdvance s r : cur s = fr s → pc (core s) = PDone r → S (cur s) < length (ops s) →
      let j := S (cur s) in
      let c := start_core (set_pc (core s) PIdle) (opx (ops s) j).1.1 (opx (ops s) j).1.2
                 (opx (ops s) j).2 (mmts s j) (recm s) in
      mstep s (MS c (ops s) j (rpc s) (rlocal s) (recm s) (updf (mmts s) (cur s) (mmt (core s)))
                 (floor s) j (updf (res s) (cur s) r) (ncas s) (hist s) (ownfl s))
  (** The last CAS returned: [try_run_root]'s commit (step 3, one line):
      the next floor is [now] ([ClearMode::Floor]: every memento of the
      operation is now older than LOCAL's next start); leaves recovery mode
      ([needs_recovery := 0]). *)
  | MCommit s r : cur s = fr s → pc (core s) = PDone r → S (cur s) = length (ops s) →
      let rs := updf (res s) (cur s) r in
      mstep s (MS (set_clock (set_pc (core s) PIdle) (S (clock (core s)))) (ops s) 0 PRec 0 false
                 (updf (mmts s) (cur s) (mmt (core s))) (clock (core s)) 0 (λ _, false) (λ _, 0)
                 (hist s ++ [(λ j, (rs j, ncas s j)) <$> seq 0 (length (ops s))]) (own (core s)))
  (** A crash of the thread ([full] false: DRAM, OWN included, survives) or
      of the system ([full]: OWN re-initialised by [Runtime::open] from
      [own_floor] and the root memento, [own_scan]) inside a root
      operation: the root operation is re-run from its first CAS in
      recovery mode, LOCAL := the floor ([try_run_root]'s retry).  The
      core's invocation (CAS [fr]) is [DetCas.v]'s [StepCrash] (the
      invariant proves OWN's re-initialisation gives OWN's value). *)
  | MCrash s (full : bool) : pc (core s) ≠ PIdle →
      let c := set_own (core s) (if full then own_scan s else own (core s)) in
      mstep s (MS (set_local (set_pc c PRec) (lst c)) (ops s) 0 PRec (floor s) true
                 (mmts s) (floor s) (fr s) (res s) (ncas s) (hist s) (ownfl s))
  (** A full crash while the thread is between root operations: OWN
      re-initialised ([own_scan]); its next root operation runs in recovery
      mode ([needs_recovery]). *)
  | MCrashIdle s : pc (core s) = PIdle →
      mstep s (MS (set_own (core s) (own_scan s)) (ops s) (cur s) (rpc s) (rlocal s) true (mmts s)
                 (floor s) (fr s) (res s) (ncas s) (hist s) (ownfl s))
  (** The replay of CAS [cur < fr], which returned before the crash: its
      recovery (cas.rs L10–L20) with its memento [mmts cur].  ④ (L15–L18):
      a failure checkpointed: ERR, LOCAL := its timestamp. *)
  | RRecFail s : cur s < fr s → rpc s = PRec → rlocal s < mts (mmts s (cur s)) →
      mfail (mmts s (cur s)) = true →
      mstep s (with_rep s (core s) (PDone false) (mts (mmts s (cur s))))
  (** ⑤ (L19): a success that is not the thread's last CAS: OK, LOCAL := its
      timestamp; no memory step. *)
  | RRecNotLast s : cur s < fr s → rpc s = PRec → rlocal s < mts (mmts s (cur s)) →
      mfail (mmts s (cur s)) = false → mts (mmts s (cur s)) < (own (core s)).2 →
      mstep s (with_rep s (core s) (PDone true) (mts (mmts s (cur s))))
  (** ⑥ (L20): the thread's last CAS: OWN := the memento ([rt.set_own]),
      then its second plain CAS ([RCas2]). *)
  | RRecLast s : cur s < fr s → rpc s = PRec → rlocal s < mts (mmts s (cur s)) →
      mfail (mmts s (cur s)) = false → (own (core s)).2 ≤ mts (mmts s (cur s)) →
      mstep s (with_rep s (set_own (core s) (mpar (mmts s (cur s)), mts (mmts s (cur s)))) P38 (rlocal s))
  (** ⑥'s [second_cas]: the location's annotated word of this CAS, with the
      memento's parity, becomes clean (the CAS fails if it is not there);
      OK, LOCAL := the memento's timestamp. *)
  | RCas2 s : cur s < fr s → rpc s = P38 →
      let x := (opx (ops s) (cur s)).1.1 in let v := (opx (ops s) (cur s)).2 in
      mstep s (with_rep s (set_locs (core s)
                 (if ann_of (locs (core s) x) v (own (core s)).1
                  then upd_loc (locs (core s)) x (Clean v) else locs (core s)))
                 (PDone true) (mts (mmts s (cur s))))
  (** The replayed CAS returned: the root operation runs on to its next CAS
      (still in recovery mode). *)
  | RNext s r : cur s < fr s → rpc s = PDone r → S (cur s) < fr s →
      mstep s (MS (core s) (ops s) (S (cur s)) PRec (rlocal s) (recm s) (mmts s) (floor s) (fr s)
                 (res s) (ncas s) (hist s) (ownfl s))
  (** ... which is CAS [fr], the one the crash cut off: its recovery is the
      core's, with LOCAL as the replay left it. *)
  | RArrive s r : cur s < fr s → rpc s = PDone r → S (cur s) = fr s →
      mstep s (MS (set_local (core s) (rlocal s)) (ops s) (fr s) PRec (rlocal s) (recm s) (mmts s)
                 (floor s) (fr s) (res s) (ncas s) (hist s) (ownfl s)).

  Arguments with_core _ _ /.
  Arguments with_rep _ _ _ _ /.

  Definition minit : mstate :=
    MS init [] 0 PRec 0 false (λ _, MW false false 0) 0 0 (λ _, false) (λ _, 0) [] (true, 0).

  Definition mreach (s : mstate) : Prop := rtc mstep minit s.

  (** ** The invariant *)

  (** LOCAL when CAS [j] starts: the floor, or the timestamp CAS [j - 1]
      returned with. *)
  Definition lo (s : mstate) (j : nat) : nat :=
    match j with 0 => floor s | S j' => mts (mmts s j') end.

  (** A returned CAS [j < fr]: its memento newer than LOCAL at its start and
      at most the running CAS's, its result in it, its first plain CAS run
      once iff OK, and OWN at least as new as an OK's checkpoint. *)
  Definition retok (s : mstate) (j : nat) : Prop :=
    let m := mmts s j in
    lo s j < mts m ∧ mts m ≤ lst (core s) ∧ mfail m = negb (res s j) ∧
    ncas s j = (if res s j then 1 else 0) ∧
    (res s j = true → mts m ≤ (own (core s)).2 ∧ (mts m = (own (core s)).2 → (own (core s)).1 = mpar m)).

  (** The replayed CAS. *)
  Definition repok (s : mstate) : Prop :=
    let m := mmts s (cur s) in
    (rpc s = PRec ∧ rlocal s = lo s (cur s)) ∨
    (rpc s = P38 ∧ res s (cur s) = true ∧ own (core s) = (mpar m, mts m)) ∨
    (∃ r, rpc s = PDone r ∧ r = res s (cur s) ∧ rlocal s = mts m).

  Definition runok (s : mstate) : Prop :=
    let c := core s in
    fr s < length (ops s) ∧ cur s ≤ fr s ∧
    argl c = (opx (ops s) (fr s)).1.1 ∧ argold c = (opx (ops s) (fr s)).1.2 ∧
    argnew c = (opx (ops s) (fr s)).2 ∧
    lst c = lo s (fr s) ∧ floor s ≤ lst c ∧
    (∀ j, j < fr s → retok s j) ∧
    (∀ j, fr s < j → mts (mmts s j) ≤ floor s ∧ ncas s j = 0) ∧
    ncas s (fr s) = (if took c then 1 else 0) ∧
    (cur s = fr s → ∀ r, pc c = PDone r → local c = mts (mmt c)) ∧
    (cur s < fr s → pc c = PRec ∧ repok s).

  Definition histok (h : list (list (bool * nat))) : Prop :=
    ∀ (ro : list (bool * nat)) (e : bool * nat), ro ∈ h → e ∈ ro → e.2 = (if e.1 then 1 else 0).

  Record minv0 (s : mstate) : Prop := {
    m_core : inv me (core s);
    m_floor : floor s < clock (core s);
    m_idle : pc (core s) = PIdle → cur s = 0 ∧ fr s = 0 ∧ (∀ j, mts (mmts s j) ≤ floor s) ∧
      ∀ j, ncas s j = 0;
    m_run : pc (core s) ≠ PIdle → runok s;
    m_hist : histok (hist s);
  }.

  (** OWN, [own_floor] and the root memento: what makes [Runtime::open]'s
      re-initialisation give OWN's value back ([own_scan_own]). *)
  Definition ownok (s : mstate) : Prop :=
    let o := own (core s) in
    (ownfl s).2 ≤ o.2 ∧ ((ownfl s).2 = o.2 → ownfl s = o) ∧
    (∀ j, mfail (slot s j) = false →
       mts (slot s j) ≤ o.2 ∧ (mts (slot s j) = o.2 → 0 < o.2 → mpar (slot s j) = o.1)) ∧
    (ownfl s = o ∨ (floor s < o.2 ∧ ∃ j, j < NS ∧ mfail (slot s j) = false ∧
                                          (mpar (slot s j), mts (slot s j)) = o)) ∧
    (pc (core s) ≠ PIdle → length (ops s) ≤ NS ∧
       (mfail (mmt (core s)) = false → floor s < mts (mmt (core s)) → took (core s) = true)).

  Definition minv (s : mstate) : Prop := minv0 s ∧ ownok s.

  Lemma scan_own (o o0 : bool * nat) (l : list mword) :
    o0.2 ≤ o.2 → (o0.2 = o.2 → o0 = o) →
    (∀ m, m ∈ l → mfail m = false → mts m ≤ o.2 ∧ (mts m = o.2 → 0 < o.2 → mpar m = o.1)) →
    (o0 = o ∨ ∃ m, m ∈ l ∧ mfail m = false ∧ (mpar m, mts m) = o) →
    foldl scan_step o0 l = o.
  Proof.
    revert o0. induction l as [|m l IH]; intros o0 Hle Heq Hl Hach; simpl.
    - destruct Hach as [->|(m & Hm & _)]; [done|by apply elem_of_nil in Hm].
    - apply IH.
      + rewrite /scan_step. destruct (mfail m) eqn:Hf; simpl; [done|].
        case_bool_decide; simpl; [|done]. by destruct (Hl m (elem_of_list_here m l) Hf).
      + rewrite /scan_step. destruct (mfail m) eqn:Hf; simpl; [done|].
        case_bool_decide as Hlt; simpl; [|done].
        intros Heq'. destruct (Hl m (elem_of_list_here m l) Hf) as [_ Hp].
        destruct o as [op ot]; simpl in *. rewrite (Hp Heq' ltac:(lia)). by rewrite Heq'.
      + intros m' Hm'. apply Hl. by apply elem_of_list_further.
      + destruct Hach as [->|(m' & Hm' & Hf' & Ho)].
        * left. rewrite /scan_step. destruct (mfail m) eqn:Hf; simpl; [done|].
          rewrite bool_decide_false; [done|]. destruct (Hl m (elem_of_list_here m l) Hf). lia.
        * apply elem_of_cons in Hm' as [->|Hm'].
          -- left. subst o. rewrite /scan_step Hf' /=. case_bool_decide as Hlt; [done|].
             apply Heq. simpl in *. lia.
          -- right. by exists m'.
  Qed.

  Lemma minv_init : minv minit.
  Proof.
    split; [split; simpl|].
    - apply inv_init.
    - rewrite /init /=. lia.
    - intros _. split_and!; [done|done| |done]. intros j. simpl. lia.
    - rewrite /init /=. done.
    - intros ro e Hro. by apply elem_of_nil in Hro.
    - rewrite /ownok /=. split_and!; try done; try (by left); try (intros Hp; by exfalso).
      intros _ _. split; [lia|intros _ ?; lia].
  Qed.

  Lemma own_scan_own s : ownok s → own_scan s = own (core s).
  Proof.
    intros (O1 & O2 & O3 & O4 & _). rewrite /own_scan. apply scan_own; try done.
    - intros m Hm. apply elem_of_list_fmap in Hm as (j & -> & _). apply O3.
    - destruct O4 as [->|(_ & j & Hj & Hf & Heq)]; [by left|right]. exists (slot s j).
      split_and!; try done. apply elem_of_list_fmap. exists j. split; [done|]. apply elem_of_seq. lia.
  Qed.

  (** ** Facts about [DetCas.v]'s steps *)

  Lemma step_clock c c' : step me c c' → clock c ≤ clock c'.
  Proof. intros Hs. destruct Hs; simpl; lia. Qed.

  (** LOCAL may be moved while the thread is between invocations. *)
  Lemma inv_set_local_idle c f : inv me c → pc c = PIdle → f < clock c → inv me (set_local c f).
  Proof.
    intros Hi Hpc Hf. destruct Hi as [Hc Hlts Hown Hent Hhv Hhg Hloc Hunh H25 H34 H38 Hfail Hrec Hrh Hidle].
    split; simpl; try done.
    - destruct Hc as (? & ? & ? & ?). split_and!; lia.
    - intros Hp. congruence.
    - intros Hp. congruence.
  Qed.

  (** OWN as the running CAS's recovery finds it: while the invocation is
      recovered, OWN is not newer than LOCAL only if no annotated word of
      [me] with OWN's parity is in memory. *)
  Lemma no_ann_own c x v : inv me c → pc c = PRec → (own c).2 ≤ lst c →
    ann_of (locs c x) v (own c).1 = false.
  Proof.
    intros Hi Hpc Hle. destruct (locs c x) as [w|v' p tid n] eqn:Hw; [done|].
    simpl. apply bool_decide_eq_false. intros (-> & Hp & ->).
    destruct (i_loc me c Hi _ _ _ _ _ Hw eq_refl) as (_ & _ & Hpl & _ & Htook & _).
    destruct (i_rec me c Hi Hpc) as (_ & Hcur & Hstale).
    destruct (i_own me c Hi) as [(Hnone & _ & Hown)|(t & Ht & Hown)];
      rewrite Hown /= in Hp Hle.
    - subst p. by destruct (lastp c).
    - destruct (decide (lst c < mts (mmt c))) as [Hlt|Hge].
      + destruct (Hcur Hlt) as [(_ & ?)|(_ & _ & Hs & _)]; [congruence|].
        rewrite Hs in Ht. injection Ht as <-. lia.
      + rewrite (Hstale ltac:(lia) Htook) in Ht. done.
  Qed.

  (** A step of the running CAS (not its start, [StepNext] or crash). *)
  Lemma thread_step c c' : inv me c → step me c c' → pc c ≠ PIdle → (∀ r, pc c ≠ PDone r) →
    pc c' ≠ PRec →
    argl c' = argl c ∧ argold c' = argold c ∧ argnew c' = argnew c ∧ lst c' = lst c ∧
    clock c ≤ clock c' ∧ pc c' ≠ PIdle ∧
    (own c' = own c ∨ clock c ≤ (own c').2) ∧
    (if bool_decide (pc c = P25 ∧ pc c' = P34) then took c = false ∧ took c' = true
     else took c' = took c) ∧
    (∀ r, pc c' = PDone r → local c' = mts (mmt c')).
  Proof.
    intros Hi Hs Hidle Hdone Hrec. pose proof (step_clock c c' Hs) as Hcl.
    destruct Hs as [s l o nw stale Hpc Hst | s Hpc Hl | s Hpc Hl | s Hpc | s Hpc
      | s Hpc | s r Hpc | s Hpc | s Hpc Hlt Hf | s Hpc Hlt Hf Hown' | s Hpc Hlt Hf Hown'
      | s p n Hpc Hle Hl | s Hpc Hle Hl | s Hpc Hh | s Hpc Hh | s l w Hm Hw
      | s l v p n Hl | s n p t Hin Hlt | s l v p n t Hl Hin | s ];
      simpl in *; try congruence.
    all: try (exfalso; by eapply Hdone).
    all: case_bool_decide as Hbd; [destruct Hbd as [Hb1 Hb2]|]; simpl in *; try congruence;
      try (exfalso; apply Hbd; split; congruence).
    all: split_and!; try done; try (by left); try (right; simpl; lia);
      try (intros ? [= <-]; done); try (intros r' Hr'; exfalso; by eapply Hdone).
    - (* StepCas1Ok: from L25, where the invocation has not taken effect *)
      by destruct (i_p25 me s Hi (or_introl Hpc)).
    - (* StepRecLast: OWN := the memento, which it already is *)
      left. destruct (i_rec me s Hi Hpc) as (Hl & Hcur & _). rewrite Hl in Hlt.
      destruct (Hcur Hlt) as [(? & _)|(_ & _ & Hsome & Hmp)]; [congruence|].
      destruct (i_own me s Hi) as [(? & _)|(t & Ht & Hown)]; [congruence|].
      rewrite Hsome in Ht. injection Ht as <-. by rewrite Hown Hmp.
  Qed.

  Lemma set_own_id c : set_own c (own c) = c.
  Proof. by destruct c. Qed.
  Lemma set_locs_id c : set_locs c (locs c) = c.
  Proof. by destruct c. Qed.
  Lemma set_local_id c : set_local c (local c) = c.
  Proof. by destruct c. Qed.

  Lemma start_core_inv c x o n m r : inv me c → pc c = PIdle → mts m ≤ local c →
    inv me (start_core c x o n m r).
  Proof.
    intros Hi Hpc Hm. rewrite /start_core.
    assert (Hi2 := step_inv me _ _ Hi (StepStart me c x o n m Hpc Hm)).
    destruct r; [|done]. eapply step_inv; [exact Hi2|]. apply StepCrash. done.
  Qed.

  Lemma start_core_fields c x o n m r :
    let c' := start_core c x o n m r in
    pc c' ≠ PIdle ∧ (∀ r', pc c' ≠ PDone r') ∧ argl c' = x ∧ argold c' = o ∧ argnew c' = n ∧
    lst c' = local c ∧ took c' = false ∧ own c' = own c ∧ clock c' = clock c ∧ mmt c' = m.
  Proof. destruct r; simpl; split_and!; done. Qed.

  (** The running CAS's result is its effect ([DetCas.v]'s [i_p38], [i_fail]). *)
  Lemma done_facts c r : inv me c → pc c = PDone r →
    took c = r ∧ mfail (mmt c) = negb r ∧ lst c < mts (mmt c) ∧
    (r = true → own c = (mpar (mmt c), mts (mmt c))).
  Proof.
    intros Hi Hpc. destruct r.
    - destruct (i_p38 me c Hi (or_intror Hpc)) as (Ht & Hs & Hf & Hlt & Hmp).
      split_and!; try done. intros _.
      destruct (i_own me c Hi) as [(Hn & _)|(t & Ht' & Hown)]; [congruence|].
      rewrite Hs in Ht'. injection Ht' as <-. by rewrite Hown Hmp.
    - destruct (i_fail me c Hi Hpc) as (Ht & Hf & Hlt). split_and!; done.
  Qed.


  Lemma lo_advance (s : mstate) c0 p0 l0 b0 rs0 m i : i ≤ cur s →
    lo (MS c0 (ops s) (S (cur s)) p0 l0 b0 (updf (mmts s) (cur s) m) (floor s) (S (cur s)) rs0
          (ncas s) (hist s) (ownfl s)) i = lo s i.
  Proof. intros Hi. destruct i as [|i]; [done|]. rewrite /lo /updf /= decide_False; [done|lia]. Qed.

  Lemma mstep_inv0 s s' : minv0 s → ownok s → mstep s s' → minv0 s'.
  Proof.
    intros Hm Hownok Hstep. destruct Hm as [Hc Hfl Hidle Hrun Hh].
    destruct Hstep as [s os r Hpc Hne HNS | s c' Hcur Hs Hpi Hpd Hpr | s c' [Hs Hsame]
      | s r Hcur Hpc Hlen | s r Hcur Hpc Hlen | s full Hpc | s Hpc
      | s Hcur Hrpc Hlt Hf | s Hcur Hrpc Hlt Hf Hown | s Hcur Hrpc Hlt Hf Hown
      | s Hcur Hrpc | s r Hcur Hrpc Hnext | s r Hcur Hrpc Harr].
    - (* MStart *)
      destruct (Hidle Hpc) as (Hc0 & Hf0 & Hst & _).
      assert (Hi1 : inv me (set_local (core s) (floor s))) by (by apply inv_set_local_idle).
      pose proof (start_core_fields (set_local (core s) (floor s)) (opx os 0).1.1 (opx os 0).1.2
                    (opx os 0).2 (mmts s 0) r) as (Hp1 & Hp2 & Hx & Ho & Hn & Hl & Ht & Hw & Hk & Hmm).
      split; simpl.
      + apply start_core_inv; [done|done|]. simpl. apply Hst.
      + rewrite Hk /=. done.
      + intros ?. by exfalso.
      + intros _. rewrite /runok /=. rewrite Hx Ho Hn Hl Ht /=.
        split_and!; try done; try lia.
        * destruct os; [done|simpl; lia].
        * intros _ r' Hr'. exfalso. eapply Hp2. exact Hr'.
      + done.
    - (* MThread *)
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (thread_step _ _ Hc Hs Hpi Hpd Hpr)
        as (Hx' & Ho' & Hn' & Hl' & Hk & Hpi' & Hown & Htk & Hdn').
      pose proof (i_clock me _ Hc) as (_ & _ & Hlc & _).
      split; simpl.
      + by eapply step_inv.
      + lia.
      + intros ?. by exfalso.
      + intros _. rewrite /runok /retok /repok /=. rewrite Hx' Ho' Hn' Hl'.
        split_and!; try done.
        * intros j Hj. destruct (Hret j Hj) as (R1 & R2 & R3 & R4 & R5).
          split_and!; try done.
          -- case_bool_decide; [|done]. rewrite /updf decide_False; [done|lia].
          -- intros Hr. destruct (R5 Hr) as [Hle Heq]. destruct Hown as [-> | Hge]; [done|].
             split; [lia|]. intros. lia.
        * intros j Hj. destruct (Hstale j Hj). split; [done|].
          case_bool_decide; [|done]. rewrite /updf decide_False; [done|lia].
        * case_bool_decide as Hb.
          -- rewrite /updf decide_True // Hnc. destruct Htk as [-> ->]. done.
          -- by rewrite Htk.
        * intros Hlt. lia.
      + done.
    - (* MEnv *)
      destruct Hsame as (Hp' & Hx' & Ho' & Hn' & Hm' & Hw' & Hl' & Hs' & Ht').
      pose proof (step_clock _ _ Hs) as Hk.
      split; simpl.
      + by eapply step_inv.
      + lia.
      + rewrite Hp'. done.
      + rewrite Hp'. intros Hpi. destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
        rewrite /runok /retok /repok /=. rewrite Hp' Hx' Ho' Hn' Hm' Hw' Hl' Hs' Ht'. split_and!; done.
      + done.
    - (* MAdvance *)
      assert (Hpi : pc (core s) ≠ PIdle) by congruence.
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (done_facts _ _ Hc Hpc) as (Htk & Hmf & Hlt & Hok).
      pose proof (Hdn Hcur r Hpc) as Hloc.
      assert (Hi1 : inv me (set_pc (core s) PIdle)) by (eapply step_inv; [done|by apply StepNext with r]).
      pose proof (start_core_fields (set_pc (core s) PIdle) (opx (ops s) j).1.1 (opx (ops s) j).1.2
                    (opx (ops s) j).2 (mmts s j) (recm s)) as (Hp1 & Hp2 & Hx1 & Ho1 & Hn1 & Hl1 & Ht1 & Hw1 & Hk1 & Hmm1).
      simpl in Hl1, Hw1.
      assert (Hsj : mts (mmts s j) ≤ floor s) by (apply Hstale; subst j; lia).
      split; simpl.
      + apply start_core_inv; [done|done|]. simpl. lia.
      + rewrite Hk1 /=. done.
      + intros ?. by exfalso.
      + intros _. rewrite /runok /retok /repok /=. rewrite Hx1 Ho1 Hn1 Hl1 Ht1 Hw1. subst j.
        split_and!; try done.
        * rewrite /lo /updf /= decide_True //.
        * rewrite -Hcur in Hlst. lia.
        * intros i Hi. rewrite lo_advance; [|lia]. rewrite /updf.
          destruct (decide (i = cur s)) as [->|Hne].
          -- assert (Hlo : lo s (cur s) = lst (core s)) by (by rewrite Hlst Hcur).
             split_and!; try done; try lia.
             ++ rewrite Hcur Hnc Htk. done.
             ++ intros ->. rewrite (Hok eq_refl) /=. split; [lia|done].
          -- destruct (Hret i ltac:(lia)) as (R1 & R2 & R3 & R4 & R5).
             rewrite -Hcur in Hlst. split_and!; try done; lia.
        * intros i Hi. rewrite /updf decide_False; [|lia]. apply Hstale. lia.
        * destruct (Hstale (S (cur s)) ltac:(lia)) as [_ ->]. done.
        * intros _ r' Hr'. by exfalso; eapply Hp2.
        * intros Hlt'. lia.
      + done.
    - (* MCommit *)
      assert (Hpi : pc (core s) ≠ PIdle) by congruence.
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (done_facts _ _ Hc Hpc) as (Htk & Hmf & Hlt & Hok).
      pose proof (i_clock me _ Hc) as (_ & _ & Hlc & Hmc).
      split; simpl.
      + assert (Hi1 : inv me (set_pc (core s) PIdle)) by (eapply step_inv; [done|by apply StepNext with r]).
        exact (step_inv me _ _ Hi1 (StepTick me _)).
      + lia.
      + intros _. split_and!; [done|done| |done]. intros i. rewrite /updf.
        destruct (decide (i = cur s)) as [->|Hne]; [lia|].
        destruct (decide (i < fr s)) as [Hi|Hi].
        * destruct (Hret i Hi) as (_ & R2 & _). lia.
        * destruct (Hstale i ltac:(lia)). lia.
      + intros Hp. by exfalso.
      + intros ro e Hro He. apply elem_of_app in Hro as [Hro|Hro]; [by eapply Hh|].
        apply elem_of_list_singleton in Hro as ->.
        apply elem_of_list_fmap in He as (i & -> & Hi). apply elem_of_seq in Hi. simpl.
        subst rs. rewrite /updf. destruct (decide (i = cur s)) as [->|Hne].
        * rewrite Hcur Hnc Htk. done.
        * destruct (Hret i ltac:(lia)) as (_ & _ & _ & R4 & _). done.
    - (* MCrash *)
      destruct (Hrun Hpc) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      assert (Heq : set_own (core s) (if full then own_scan s else own (core s)) = core s).
      { destruct full; [rewrite own_scan_own //|]; apply set_own_id. }
      subst c. rewrite Heq.
      split; simpl.
      + eapply step_inv; [done|]. by apply StepCrash.
      + done.
      + done.
      + intros _. rewrite /runok /retok /repok /=. split_and!; try done; try lia.
        intros _. split; [done|]. left. done.
      + done.
    - (* MCrashIdle *)
      rewrite own_scan_own // set_own_id. split; simpl; try done.
    - (* RRecFail *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hret _ Hcur) as (_ & _ & R3 & _).
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try (intros ?; lia).
      + intros _. split; [by apply Hrep|]. right; right. exists false. split_and!; try done.
        rewrite Hf in R3. by destruct (res s (cur s)).
    - (* RRecNotLast: ⑤ *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hret _ Hcur) as (_ & _ & R3 & _).
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try (intros ?; lia).
      + intros _. split; [by apply Hrep|]. right; right. exists true. split_and!; try done.
        rewrite Hf in R3. by destruct (res s (cur s)).
    - (* RRecLast: ⑥, OWN already the memento *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hret _ Hcur) as (_ & _ & R3 & _ & R5).
      assert (Hres : res s (cur s) = true) by (rewrite Hf in R3; by destruct (res s (cur s))).
      destruct (R5 Hres) as [Hle Hpar].
      assert (Heq : (mpar (mmts s (cur s)), mts (mmts s (cur s))) = own (core s)).
      { destruct (own (core s)) as [op ot]; simpl in *. f_equal; [symmetry; apply Hpar|]; lia. }
      rewrite Heq set_own_id.
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try (intros ?; lia).
      + intros _. split; [by apply Hrep|]. right; left. split_and!; done.
    - (* RCas2: ⑥'s second plain CAS finds nothing to do *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hrep Hcur) as (Hprec & [(? & _)|[(_ & Hres & Hown)|(? & ? & _)]]); [congruence| |congruence].
      destruct (Hret _ Hcur) as (_ & R2 & _).
      rewrite no_ann_own; [|done|done|rewrite Hown /=; done].
      rewrite set_locs_id.
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try (intros ?; lia).
      + intros _. split; [done|]. right; right. exists true. done.
    - (* RNext *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hrep Hcur) as (Hprec & [(? & _)|[(? & _)|(r' & Hr' & _ & Hrl)]]); [congruence|congruence|].
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try lia.
      intros _. split; [done|]. left. done.
    - (* RArrive *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      destruct (Hrep Hcur) as (Hprec & [(? & _)|[(? & _)|(r' & Hr' & _ & Hrl)]]); [congruence|congruence|].
      destruct (i_rec me _ Hc Hprec) as (Hll & _).
      assert (Hloc : rlocal s = local (core s)).
      { rewrite Hrl Hll Hlst -Harr. done. }
      rewrite Hloc set_local_id.
      split; simpl; try done.
      intros _. rewrite /runok /retok /repok /=. split_and!; try done; try lia;
        try (intros ?; lia); try (intros _ r'' Hr''; congruence).
  Qed.

  Lemma own_lt_clock c : inv me c → (own c).2 < clock c.
  Proof.
    intros Hi. destruct (i_clock me c Hi) as (Htp & _).
    destruct (i_own me c Hi) as [(_ & _ & ->)|(t & Ht & ->)]; simpl; [done|].
    by destruct (i_lastts me c Hi t Ht).
  Qed.

  (** How a step of the running CAS moves OWN and its memento: L29 writes
      a failure (before the CAS took effect), L34–L36 a success and OWN. *)
  Lemma thread_step_own c c' : inv me c → step me c c' → pc c ≠ PIdle → (∀ r, pc c ≠ PDone r) →
    pc c' ≠ PRec →
    (own c' = own c ∧ mmt c' = mmt c) ∨ (own c' = own c ∧ mfail (mmt c') = true ∧ took c = false) ∨
    (own c' = (mpar (mmt c'), mts (mmt c')) ∧ mfail (mmt c') = false ∧ (own c).2 < (own c').2 ∧
     clock c ≤ (own c').2 ∧ took c' = true).
  Proof.
    intros Hi Hs Hidle Hdone Hrec.
    destruct Hs as [s l o nw stale Hpc Hst | s Hpc Hl | s Hpc Hl | s Hpc | s Hpc
      | s Hpc | s r Hpc | s Hpc | s Hpc Hlt Hf | s Hpc Hlt Hf Hown' | s Hpc Hlt Hf Hown'
      | s p n Hpc Hle Hl | s Hpc Hle Hl | s Hpc Hh | s Hpc Hh | s l w Hm Hw
      | s l v p n Hl | s n p t Hin Hlt | s l v p n t Hl Hin | s ];
      simpl in *; try congruence; try (left; done).
    - (* StepFail *)
      right; left. split_and!; try done. by destruct (i_p25 me s Hi (or_intror Hpc)).
    - (* StepCkpt *)
      right; right. pose proof (own_lt_clock s Hi). split_and!; try done; try lia.
      by destruct (i_p34 me s Hi Hpc).
    - (* StepRecLast *)
      left. split; [|done]. destruct (i_rec me s Hi Hpc) as (Hl & Hcur & _). rewrite Hl in Hlt.
      destruct (Hcur Hlt) as [(? & _)|(_ & _ & Hsome & Hmp)]; [congruence|].
      destruct (i_own me s Hi) as [(? & _)|(t & Ht & Hown)]; [congruence|].
      rewrite Hsome in Ht. injection Ht as <-. by rewrite Hown Hmp.
  Qed.

  Lemma ownok_transfer s s' : ownok s → own (core s') = own (core s) → ownfl s' = ownfl s →
    floor s' = floor s → (∀ j, slot s' j = slot s j) →
    (pc (core s') ≠ PIdle → length (ops s') ≤ NS ∧
       (mfail (mmt (core s')) = false → floor s < mts (mmt (core s')) → took (core s') = true)) →
    ownok s'.
  Proof.
    intros (O1 & O2 & O3 & O4 & O5) Hw Hf Hfl Hsl H5. rewrite /ownok Hw Hf Hfl.
    split_and!; try done.
    - intros j. rewrite Hsl. apply O3.
    - destruct O4 as [?|(? & j & ? & ? & ?)]; [by left|right]. split; [done|]. exists j. by rewrite !Hsl.
  Qed.

  Lemma mstep_ownok s s' : minv0 s → ownok s → mstep s s' → ownok s'.
  Proof.
    intros Hm Hownok Hstep. pose proof Hownok as (O1 & O2 & O3 & O4 & O5).
    destruct Hm as [Hc Hfl Hidle Hrun Hh].
    destruct Hstep as [s os r Hpc Hne HNS | s c' Hcur Hs Hpi Hpd Hpr | s c' [Hs Hsame]
      | s r Hcur Hpc Hlen | s r Hcur Hpc Hlen | s full Hpc | s Hpc
      | s Hcur Hrpc Hlt Hf | s Hcur Hrpc Hlt Hf Hown | s Hcur Hrpc Hlt Hf Hown
      | s Hcur Hrpc | s r Hcur Hrpc Hnext | s r Hcur Hrpc Harr].
    - (* MStart *)
      destruct (Hidle Hpc) as (Hc0 & Hf0 & Hst & _).
      pose proof (start_core_fields (set_local (core s) (floor s)) (opx os 0).1.1 (opx os 0).1.2
                    (opx os 0).2 (mmts s 0) r) as (Hp1 & Hp2 & Hx & Ho & Hn & Hl & Ht & Hw & Hk & Hmm).
      apply ownok_transfer with s; try done.
      + intros j. rewrite /slot /= Hmm.
        case_bool_decide as Hb1; case_bool_decide as Hb2.
        * destruct Hb2; congruence.
        * by destruct Hb1 as [_ ->].
        * destruct Hb2; congruence.
        * done.
      + intros _. split; [done|]. rewrite Hmm. intros _ Hlt. specialize (Hst 0). simpl in Hlt. lia.
    - (* MThread *)
      destruct (Hrun Hpi) as (Hfr & _).
      destruct (thread_step _ _ Hc Hs Hpi Hpd Hpr) as (_ & _ & _ & _ & Hk & Hpi' & _ & Htk & _).
      destruct (O5 Hpi) as [HNS O5'].
      assert (Htk' : took (core s) = true → took c' = true).
      { intros Ht. case_bool_decide; [by destruct Htk|by rewrite Htk]. }
      assert (Hsl : ∀ j, j ≠ fr s → slot (MS c' (ops s) (cur s) (rpc s) (rlocal s)
          (if bool_decide (pc (core s) = PRecHelp ∧ pc c' = P25) then false else recm s)
          (mmts s) (floor s) (fr s) (res s)
          (if bool_decide (pc (core s) = P25 ∧ pc c' = P34)
           then updf (ncas s) (fr s) (S (ncas s (fr s))) else ncas s) (hist s) (ownfl s)) j = slot s j).
      { intros j Hj. rewrite /slot /=.
        rewrite (bool_decide_false (pc c' ≠ PIdle ∧ j = fr s)); [|intros [_ ?]; congruence].
        rewrite (bool_decide_false (pc (core s) ≠ PIdle ∧ j = fr s)); [done|intros [_ ?]; congruence]. }
      assert (Hslf : slot (MS c' (ops s) (cur s) (rpc s) (rlocal s)
          (if bool_decide (pc (core s) = PRecHelp ∧ pc c' = P25) then false else recm s)
          (mmts s) (floor s) (fr s) (res s)
          (if bool_decide (pc (core s) = P25 ∧ pc c' = P34)
           then updf (ncas s) (fr s) (S (ncas s (fr s))) else ncas s) (hist s) (ownfl s)) (fr s) = mmt c').
      { rewrite /slot /= bool_decide_true //. }
      assert (Hsf : slot s (fr s) = mmt (core s)) by (rewrite /slot bool_decide_true //).
      destruct (thread_step_own _ _ Hc Hs Hpi Hpd Hpr)
        as [(Hw & Hmm)|[(Hw & Hff & Htf)|(Hw & Hff & Hlt & Hkl & Ht')]].
      + apply ownok_transfer with s; try done.
        * intros j. destruct (decide (j = fr s)) as [->|Hj]; [|by apply Hsl]. by rewrite Hslf Hsf.
        * intros _. split; [done|]. simpl. rewrite Hmm. intros Hf Hlt. by apply Htk', O5'.
      + rewrite /ownok /= Hw. split_and!; try done.
        * intros j. destruct (decide (j = fr s)) as [->|Hj]; [by rewrite Hslf Hff|rewrite Hsl //].
          apply O3.
        * destruct O4 as [?|(Hlt & j & Hj & Hf & Heq)]; [by left|].
          destruct (decide (j = fr s)) as [->|Hne].
          -- exfalso. rewrite Hsf in Hf Heq. rewrite -Heq /= in Hlt.
             specialize (O5' Hf Hlt). congruence.
          -- right. split; [done|]. exists j. rewrite Hsl //.
        * intros _. split; [done|]. by rewrite Hff.
      + rewrite /ownok /= Hw /=. rewrite Hw /= in Hlt Hkl. split_and!.
        * lia.
        * intros Heq. lia.
        * intros j. destruct (decide (j = fr s)) as [->|Hj]; [rewrite Hslf; split; [lia|done]|].
          rewrite Hsl //. intros Hf. destruct (O3 j Hf). split; [lia|intros; lia].
        * right. split; [lia|]. exists (fr s). rewrite Hslf. split_and!; try done. lia.
        * intros _. split; [done|]. intros _ _. done.
    - (* MEnv *)
      destruct Hsame as (Hp' & Hx' & Ho' & Hn' & Hm' & Hw' & Hl' & Hs' & Ht').
      apply ownok_transfer with s; try done.
      + intros j. rewrite /slot /= Hp' Hm'. done.
      + simpl. rewrite Hp' Hm' Ht'. done.
    - (* MAdvance *)
      assert (Hpi : pc (core s) ≠ PIdle) by congruence.
      destruct (Hrun Hpi) as (Hfr & Hcf & Hx & Ho & Hn & Hlst & Hfl2 & Hret & Hstale & Hnc & Hdn & Hrep).
      pose proof (start_core_fields (set_pc (core s) PIdle) (opx (ops s) j).1.1 (opx (ops s) j).1.2
                    (opx (ops s) j).2 (mmts s j) (recm s)) as (Hp1 & Hp2 & Hx1 & Ho1 & Hn1 & Hl1 & Ht1 & Hw1 & Hk1 & Hmm1).
      destruct (O5 Hpi) as [HNS _].
      assert (Hsj : mts (mmts s j) ≤ floor s) by (apply Hstale; subst j; lia).
      apply ownok_transfer with s; try done.
      + intros i. rewrite /slot /= Hmm1. subst j. rewrite /updf.
        case_bool_decide as Hb1; case_bool_decide as Hb2.
        * destruct Hb1 as [_ ->], Hb2 as [_ Hb2]. lia.
        * by destruct Hb1 as [_ ->].
        * destruct Hb2 as [_ ->]. rewrite decide_True //.
        * rewrite decide_False //. intros ->. apply Hb2. split; [done|lia].
      + intros _. split; [done|]. rewrite Hmm1. intros _ Hlt. lia.
    - (* MCommit *)
      assert (Hpi : pc (core s) ≠ PIdle) by congruence.
      assert (Hsl : ∀ i, mmts (MS (set_clock (set_pc (core s) PIdle) (S (clock (core s)))) (ops s) 0 PRec 0
          false (updf (mmts s) (cur s) (mmt (core s))) (clock (core s)) 0 (λ _, false) (λ _, 0)
          (hist s ++ [(λ j, (rs j, ncas s j)) <$> seq 0 (length (ops s))]) (own (core s))) i = slot s i).
      { intros i. rewrite /slot /= /updf Hcur. case_bool_decide as Hb; [by destruct Hb as [_ ->]; rewrite decide_True|].
        rewrite decide_False //. intros ->. by apply Hb. }
      rewrite /ownok /=. split_and!; try done.
      + intros i. unfold slot at 1 2 3 4. simpl. pose proof (Hsl i) as Hi. simpl in Hi. rewrite Hi.
        apply O3.
      + by left.
    - (* MCrash *)
      assert (Heq : set_own (core s) (if full then own_scan s else own (core s)) = core s).
      { destruct full; [rewrite own_scan_own //|]; apply set_own_id. }
      subst c. rewrite Heq.
      apply ownok_transfer with s; try done.
      + intros j. rewrite /slot /=.
        case_bool_decide as Hb1; case_bool_decide as Hb2; try done.
        * exfalso. apply Hb2. split; [done|]. by destruct Hb1.
        * exfalso. apply Hb1. split; [done|]. by destruct Hb2.
      + simpl. intros _. apply O5. done.
    - (* MCrashIdle *)
      rewrite own_scan_own //.
    - (* RRecFail *) done.
    - (* RRecNotLast *) done.
    - (* RRecLast *)
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (_ & _ & _ & _ & _ & _ & _ & Hret & _).
      destruct (Hret _ Hcur) as (_ & _ & R3 & _ & R5).
      assert (Hres : res s (cur s) = true) by (rewrite Hf in R3; by destruct (res s (cur s))).
      destruct (R5 Hres) as [Hle Hpar].
      assert (Heq : (mpar (mmts s (cur s)), mts (mmts s (cur s))) = own (core s)).
      { destruct (own (core s)) as [op ot]; simpl in *. f_equal; [symmetry; apply Hpar|]; lia. }
      rewrite /with_rep Heq set_own_id. done.
    - (* RCas2 *)
      apply ownok_transfer with s; try done.
    - (* RNext *) done.
    - (* RArrive *)
      apply ownok_transfer with s; try done.
  Qed.

  Lemma mstep_inv s s' : minv s → mstep s s' → minv s'.
  Proof.
    intros [Hm Ho] Hs. split; [by eapply mstep_inv0|by eapply mstep_ownok].
  Qed.

  Lemma mreach_inv s : mreach s → minv s.
  Proof.
    intros Hr. assert (∀ s1 s2, rtc mstep s1 s2 → minv s1 → minv s2) as Hgen.
    { intros s1 s2 H. induction H as [|s1 s1' s2 Hstep _ IH]; [done|].
      intros Hi. apply IH. by eapply mstep_inv. }
    apply (Hgen minit); [done|apply minv_init].
  Qed.

  (** ** The theorems *)

  (** Whenever a CAS of the root operation returns [r] -- the running CAS
      (normal execution or its own recovery) or a CAS replayed after a crash
      (④ ⑤ ⑥) -- its first plain CAS has run exactly once if [r] is OK and
      never if ERR; a replayed CAS returns what it first returned. *)
  Theorem detcas_multi_returns s r :
    mreach s →
    (cur s < fr s → rpc s = PDone r → r = res s (cur s) ∧ ncas s (cur s) = (if r then 1 else 0)) ∧
    (cur s = fr s → pc (core s) = PDone r → ncas s (cur s) = (if r then 1 else 0)).
  Proof.
    intros Hr. destruct (mreach_inv s Hr) as [[Hc Hfl Hidle Hrun Hh] _]. split.
    - intros Hlt Hrpc.
      assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
      destruct (Hrun Hpi) as (_ & _ & _ & _ & _ & _ & _ & Hret & _ & _ & _ & Hrep).
      destruct (Hrep Hlt) as (_ & [(? & _)|[(? & _)|(r' & Hr' & Hres & _)]]); [congruence|congruence|].
      rewrite Hrpc in Hr'. injection Hr' as <-. split; [done|].
      destruct (Hret _ Hlt) as (_ & _ & _ & R4 & _). by rewrite R4 Hres.
    - intros Heq Hpc. assert (Hpi : pc (core s) ≠ PIdle) by congruence.
      destruct (Hrun Hpi) as (_ & _ & _ & _ & _ & _ & _ & _ & _ & Hnc & _).
      destruct (done_facts _ _ Hc Hpc) as (Htk & _). by rewrite Heq Hnc Htk.
  Qed.

  (** In every committed root operation, each CAS's first plain CAS ran
      exactly once if the CAS returned OK, never if it returned ERR. *)
  Theorem detcas_multi_committed s (ro : list (bool * nat)) (e : bool * nat) :
    mreach s → ro ∈ hist s → e ∈ ro → e.2 = (if e.1 then 1 else 0).
  Proof. intros Hr. apply (m_hist _ (proj1 (mreach_inv s Hr))). Qed.

  (** At most once: no CAS's first plain CAS runs twice, and L26 runs only
      for a CAS whose first plain CAS has not run (neither recovery nor
      the replay re-executes a CAS that took effect). *)
  Theorem detcas_multi_at_most_once s j : mreach s → ncas s j ≤ 1.
  Proof.
    intros Hr. destruct (mreach_inv s Hr) as [[Hc Hfl Hidle Hrun Hh] _].
    destruct (decide (pc (core s) = PIdle)) as [Hp|Hp].
    - destruct (Hidle Hp) as (_ & _ & _ & Hz). rewrite Hz. lia.
    - destruct (Hrun Hp) as (_ & _ & _ & _ & _ & _ & _ & Hret & Hstale & Hnc & _).
      destruct (lt_eq_lt_dec j (fr s)) as [[Hj| ->]|Hj].
      + destruct (Hret j Hj) as (_ & _ & _ & -> & _). destruct (res s j); lia.
      + rewrite Hnc. destruct (took (core s)); lia.
      + destruct (Hstale j Hj) as [_ ->]. lia.
  Qed.

  Theorem detcas_multi_first_cas s : mreach s → pc (core s) = P25 → ncas s (fr s) = 0.
  Proof.
    intros Hr Hpc. destruct (mreach_inv s Hr) as [[Hc Hfl Hidle Hrun Hh] _].
    assert (Hpi : pc (core s) ≠ PIdle) by congruence.
    destruct (Hrun Hpi) as (_ & _ & _ & _ & _ & _ & _ & _ & _ & Hnc & _).
    destruct (i_p25 me _ Hc (or_introl Hpc)) as [Ht _]. by rewrite Hnc Ht.
  Qed.

  (** (H-OWN) for full crashes, from the model: OWN as [Runtime::open]
      re-initialises it (the newest of [own_floor] and the successful CAS
      checkpoints of the root memento's [NS] slots) is OWN's value, at every
      reachable state: inside a root operation (its memento slots partly
      rewritten) and between root operations (after the commit's floor has
      made every slot stale). *)
  Theorem detcas_multi_own_reinit s : mreach s → own_scan s = own (core s).
  Proof. intros Hr. apply own_scan_own, (proj2 (mreach_inv s Hr)). Qed.

  (** A replayed CAS's memento is newer than LOCAL: the replay meets only ④,
      ⑤ and ⑥ (L14's test succeeds), never ③. *)
  Theorem detcas_multi_replay_fresh s :
    mreach s → cur s < fr s → rpc s = PRec → rlocal s < mts (mmts s (cur s)).
  Proof.
    intros Hr Hlt Hrpc. destruct (mreach_inv s Hr) as [[Hc Hfl Hidle Hrun Hh] _].
    assert (Hpi : pc (core s) ≠ PIdle) by (intros Hp; destruct (Hidle Hp); lia).
    destruct (Hrun Hpi) as (_ & _ & _ & _ & _ & _ & _ & Hret & _ & _ & _ & Hrep).
    destruct (Hrep Hlt) as (_ & [(_ & ->)|[(? & _)|(r' & Hr' & _)]]); [|congruence|congruence].
    by destruct (Hret _ Hlt) as (? & _).
  Qed.
End multi.

(** ** Not vacuous: ⑤ in the replay of a two-CAS root operation

    Thread 1's root operation CAS(x0: 0 → 1); CAS(x1: 0 → 2).  Both first
    plain CASes succeed; the first CAS completes (checkpoint, OWN, second
    plain CAS, L39); the second checkpoints its success (OWN moves to its
    timestamp); the thread crashes.  The replay: CAS 0's memento is newer
    than LOCAL (the floor), a success older than OWN: ⑤, OK with no memory
    step; CAS 1 is the thread's last CAS: ⑥ redoes its second plain CAS;
    the root operation commits with (OK, first plain CAS once) twice. *)
Definition ops2 : list (nat * nat * nat) := [(0, 0, 1); (1, 0, 2)].

(** [name_state] ([PxPersist.v]) binds each state the run reaches ([let]),
    so that the kernel checks each normal form once. *)

Ltac mthread H :=
  eapply rtc_l_eq;
    [eapply MThread; [by vm_compute | H | vm_compute; congruence
                     | intros ?; vm_compute; congruence | vm_compute; congruence]
    | norm_state |]; name_state.

Theorem detcas_multi_replay_case5 :
  ∃ s s' s'', mreach 1 2 s ∧ cur s = 0 ∧ fr s = 1 ∧ rpc s = PRec ∧ ncas s 0 = 1 ∧
    rlocal s < mts (mmts s 0) ∧ mfail (mmts s 0) = false ∧ mts (mmts s 0) < (own (core s)).2 ∧
    mstep 1 2 s s' ∧ rpc s' = PDone true ∧ core s' = core s ∧ ncas s' 0 = 1 ∧
    rtc (mstep 1 2) s' s'' ∧ hist s'' = [[(true, 1); (true, 1)]].
Proof.
  eexists _, _, _. split; [|split_and!].
  - (* the root operation starts, normal mode *)
    eapply rtc_l_eq; [apply (MStart 1 2 minit ops2 false); by vm_compute|norm_state|]; name_state.
    (* CAS 0: L26, L33–L36, L37–L39 *)
    mthread ltac:(apply StepCas1Ok; by vm_compute).
    mthread ltac:(apply StepCkpt; by vm_compute).
    mthread ltac:(apply StepCas2; by vm_compute).
    (* CAS 1: L26, L33–L36 *)
    eapply rtc_l_eq; [apply (MAdvance 1 2 _ true); vm_compute; (done || lia)|norm_state|]; name_state.
    mthread ltac:(apply StepCas1Ok; by vm_compute).
    mthread ltac:(apply StepCkpt; by vm_compute).
    (* a full crash (OWN re-initialised from own_floor and the root memento):
       the root operation runs again from CAS 0 in recovery mode *)
    eapply rtc_l_eq; [apply (MCrash 1 2 _ true); vm_compute; congruence|norm_state|]; name_state.
    apply rtc_refl.
  - by vm_compute.
  - by vm_compute.
  - by vm_compute.
  - by vm_compute.
  - vm_compute; lia.
  - by vm_compute.
  - vm_compute; lia.
  - (* ⑤ *)
    apply RRecNotLast; vm_compute; (done || lia).
  - by vm_compute.
  - by vm_compute.
  - by vm_compute.
  - (* CAS 1 is the one the crash cut off: ⑥, then its second plain CAS *)
    eapply rtc_l_eq; [apply (RArrive 1 2 _ true); vm_compute; (done || lia)|norm_state|]; name_state.
    mthread ltac:(apply StepRecLast; vm_compute; (done || lia)).
    mthread ltac:(apply StepCas2; by vm_compute).
    eapply rtc_l_eq; [apply (MCommit 1 2 _ true); vm_compute; (done || lia)|norm_state|]; name_state.
    apply rtc_refl.
  - by vm_compute.
Qed.

(** ** Not vacuous: ⑥ in the replay, ④ in the cut-off CAS's recovery

    Thread 1's root operation CAS(x0: 0 → 1); CAS(x1: 5 → 6).  The first
    succeeds and returns; the second fails (x1 holds 0) and checkpoints its
    failure; a thread crash before the commit.  The replay: CAS 0 is the
    thread's last success (its timestamp is OWN's): ⑥, OWN := the memento,
    its second plain CAS (the word is already clean: nothing to do), OK;
    CAS 1's recovery finds its failure: ④, ERR; the root operation commits
    with (OK, first plain CAS once) and (ERR, never). *)
Definition ops_ok_err : list (nat * nat * nat) := [(0, 0, 1); (1, 5, 6)].

Theorem detcas_multi_replay_case6 :
  ∃ s s', mreach 1 2 s ∧ cur s = 0 ∧ fr s = 1 ∧ rpc s = P38 ∧ ncas s 0 = 1 ∧
    rtc (mstep 1 2) s s' ∧ hist s' = [[(true, 1); (false, 0)]].
Proof.
  eexists _, _. split; [|split_and!].
  - eapply rtc_l_eq; [apply (MStart 1 2 minit ops_ok_err false); by vm_compute|norm_state|]; name_state.
    mthread ltac:(apply StepCas1Ok; by vm_compute).
    mthread ltac:(apply StepCkpt; by vm_compute).
    mthread ltac:(apply StepCas2; by vm_compute).
    eapply rtc_l_eq; [apply (MAdvance 1 2 _ true); vm_compute; (done || lia)|norm_state|]; name_state.
    (* CAS 1: L26 fails, LOADHELP's value is not [old]: L29–L31 *)
    mthread ltac:(apply StepCas1Fail; by vm_compute).
    mthread ltac:(apply StepFail; by vm_compute).
    (* a thread crash before the commit *)
    eapply rtc_l_eq; [apply (MCrash 1 2 _ false); vm_compute; congruence|norm_state|]; name_state.
    (* replay of CAS 0: ⑥ *)
    eapply rtc_l_eq; [apply RRecLast; vm_compute; (done || lia)|norm_state|]; name_state.
    apply rtc_refl.
  - by vm_compute.
  - by vm_compute.
  - by vm_compute.
  - by vm_compute.
  - eapply rtc_l_eq; [apply RCas2; vm_compute; (done || lia)|norm_state|]; name_state.
    eapply rtc_l_eq; [apply (RArrive 1 2 _ true); vm_compute; (done || lia)|norm_state|]; name_state.
    (* CAS 1's recovery: ④ *)
    mthread ltac:(apply StepRecFail; vm_compute; (done || lia)).
    eapply rtc_l_eq; [apply (MCommit 1 2 _ false); vm_compute; (done || lia)|norm_state|]; name_state.
    apply rtc_refl.
  - by vm_compute.
Qed.
