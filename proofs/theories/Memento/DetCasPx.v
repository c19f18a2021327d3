(** * Memento's detectable CAS on Px86's line-granular persistence: detectability

    A model of the detectable CAS of the seed paper (seed 001, Cho, Jeon,
    Kang, §3, Algorithms 1 and 2: the two plain CASes, the memento
    checkpoint with its timestamp, the flushes L33, L35 and L38, LOADHELP's
    helping through HELP[p][tid], and recovery L9–L25), as the code runs it
    ([impl/perdure-memento/src/cas.rs]: [DetectableCasAtomic::cas],
    [second_cas], [load_help], [load]; [runtime.rs]: a root operation's
    commit in [Handle::try_run_root], OWN's start-up value in
    [Runtime::open] and [compose.rs] [Scan::cas]), for any number [N] of
    threads (tids 1..N) and [NL] locations, with helping, full-system
    crashes and thread crashes, on the persistence layer of
    [Core/PxPersist.v]: every persistent word (a location, a thread's CAS
    memento, a HELP entry) is a cache line holding the sequence of its
    visible writes and a mark ([pm]); a store is appended to its line
    ([p_write]); a write persists for sure only through a [pwb] its thread
    issued after it and later fenced ([p_pwb], [p_fence]; every plain CAS is
    a locked RMW and fences its thread first, as on x86), or by an arbitrary
    eviction: a full crash ([SCrash]) keeps of each line any prefix at
    least as long as its mark ([p_crash_ok]), i.e. every image Px86 allows,
    and that image becomes the memory.  It supersedes, for persistence,
    the immediate-persistence model [DetCas.v].

    The steps ([step]) are listed with the seed's line and the Rust code
    each abstracts (the comments on the constructors): start (L5–L8, or in
    recovery mode L9), LOAD (Algorithm 1 L1–L3: a load, then LOADHELP,
    whose clean value the thread keeps, [PLoad y v], and returns,
    [SLoadRet]: [DetectableCasAtomic::load]'s result), L26 succeeding or failing
    (then LOADHELP, L27), LOADHELP's L4, L5–L9, L10–L12, L11/L14, L13–L16 and
    L17–L21, the failure checkpoint L29–L30 and its flush, L33, L34–L35,
    L36, L37–L38 with the code's write-back of the location, the commit
    (L39/L31/L17 and [try_run_root]'s commit), recovery ④ ⑤ ⑥ ⑦ (L14–L22)
    and ⑧ ⑨ (L23–L25), a thread crash and a full crash.  The switches
    ([config]) select the seed as written or a mutant for L33, L35, the
    memento's fence before L38, the write-back after L38, L20 and L13–L16;
    [fixed] is the protocol the code runs.

    (H-ABA), the precondition the crate's docs state ([cas.rs], "Precondition:
    no ABA on an annotated word": "a thread never re-installs the same value
    with the same parity while a helper may hold its earlier annotated
    word"), is the premise [h_aba]: the runs considered are those in which
    every first plain CAS (L26) writes a word that no helper holds (same
    location, value, parity and tid); [reachable N NL fixed h_aba] is the
    set of states such runs reach.

    Proved, for the fixed protocol, on every reachable state, for any [N],
    [NL], any schedule, any number of full-system and thread crashes:
    - [detcas_px_detectable]: each committed invocation [k] of thread [t]
      returned OK iff its first plain CAS took effect ([eff]: the write is
      in its location's history as the crashes left it), ERR iff it did
      not, and an effect returned OK is under its line's mark ([durable]),
      so no later crash undoes it;
    - [detcas_px_returns]: at the step where a thread returns (from the
      normal path or from recovery), the result is the one the invocation
      took effect with, and an OK's first plain CAS is kept by every crash
      image Px86 allows;
    - [detcas_px_at_most_once]: an invocation's first plain CAS is at most
      once in the histories; [detcas_px_first_cas_not_taken]: L26 runs only
      while its invocation has no effect (so a re-executed CAS never takes
      effect twice); [detcas_px_no_future_effect].
    Everything rests on the inductive invariant [inv] ([inv_init],
    [step_inv], [reachable_inv]): among others the §3.4 bounds of HELP
    ([helpok]: every write of HELP[p][u] helped an invocation whose first
    plain CAS is under its mark, and is below the timestamp of [u]'s next
    success of parity [p]), a cleaned annotated word of the current
    invocation implies a durable memento or a durable HELP above OWN
    ([i_cl]), and every returned invocation's annotated word is followed by
    a clean word under the mark ([locok]: what the code's write-back after
    L38 gives and the seed's L38 does not).  The as-written steps are
    refuted by explicit runs in [DetCasPxBugs.v].

    What the model abstracts:
    - visibility is sequentially consistent (no TSO store buffers: the
      §3.4 argument is phrased in x86-TSO's happens-before); each step is
      atomic; a global rdtscp clock never reset (§2.5's calibration);
    - each persistent word is its own cache line (the weakest placement:
      sharing a line only adds ordering; argued, not proved);
    - a [pwb] issued in the same step as an earlier write of its thread
      (L12 with L10–L11, L16 with L13, the write-back after L38 with its
      CAS, L35 with its store) records a line no longer than the code's, so
      the model's crash images include the code's; L33's [flush] is one
      step (a crash between its [pwb] and [pfence] is a crash before it);
    - on a thread crash the thread's issued write-backs never take effect
      (the weakest choice for an orphaned [pwb]);
    - each detectable CAS is a root operation of its own: its return is the
      root operation's commit ([try_run_root]: the deferred fence, then
      floor, result, [own_floor] and the next index in one line, persisted
      at once -- the status is written last in its line); the memento is
      one word per thread reused by the next invocation, LOCAL is the
      committed floor; the replay of earlier CASes of a multi-CAS root
      operation (⑤, L19) is not modelled (⑤ is proved unreachable here);
    - values are naturals; the value returned with ERR is not modelled
      (LOADHELP's value is used for L28's test only; LOAD returns its
      value); when patience runs out
      (L9) is the scheduler's choice; the arguments of an invocation are
      chosen at its start and stable across crashes (checkpointed);
    - the memory's words are names of contents kept in an append-only
      table ([wt]) so that a write carries a ghost part (the invocation of a
      first plain CAS, of a memento, the invocation a HELP write helped);
      no step reads the ghost part;
    - L22 compares the parity too, as the code does (the seed: tid and
      value);
    - a LOAD is an operation of its own outside the detectable CASes' root
      operations (the code's [load] runs inside a root operation, [h]); a
      thread crash runs it again from its first load ([tcrash_pc]: the
      runtime re-runs the root operation it is part of), a full crash ends
      it (it is not detectable).
    Not covered here: the history-level statements of [Core/DurableLin.v]
    (durable linearizability and [detectable] over invoke/return/crash/
    recover histories, with loads and failed CASes: [DetCasPxLin.v]) --
    detectability is stated on the model's states; multi-CAS root
    operations and memento clearing; liveness.

    The precondition-free (16-byte, [TwoWord]) form is the same model with
    [fixedw true]: a location word carries a nonce ([lnc]), 0 in every
    clean word and, in the one-word form ([fixed], [c2w] false), in every
    word; L26 writes the nonce t_own in the two-word form; LOADHELP
    compares whole locations ([phys2]).  The invariant is proved for
    [fixedw tw] under the premise [h_aba2] (the same as [h_aba] on whole
    locations, implied by it): [step_inv_w], [reachable_inv_w].
    [DetCasPxTwoWord.v] proves [h_aba2] at every first plain CAS of every
    run of the two-word form, and so the theorems above for all its runs. *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From stdpp Require Import base list relations.

(** ** Words *)

(** A location's word: its value, its annotation (parity, tid) if any (the
    physical word, [phys]), the nonce (the second word of the two-word
    location, [cas.rs] [CasPair]'s [nonce]: 0 in a clean word and in the
    one-word form, see [c2w]; [phys2] is the whole location), and a ghost
    tag, the (thread, invocation) of the first plain CAS that wrote it. *)
Record lword := LW { lv : nat; la : option (bool * nat); lnc : nat; lg : option (nat * nat) }.
(** A CAS memento: parity, failure flag, timestamp; ghost: the invocation. *)
Record mword := MW { mpar : bool; mfail : bool; mts : nat; mg : option nat }.
(** A HELP entry: a timestamp; ghost: the invocation of its owner it helped. *)
Record hword := HW { hts : nat; hg : option nat }.
Inductive cont := CLoc (w : lword) | CMmt (w : mword) | CHelp (w : hword).

Definition lw0 : lword := LW 0 None 0 None.
Definition mw0 : mword := MW false false 0 None.
Definition hw0 : hword := HW 0 None.
Definition phys (w : lword) : nat * option (bool * nat) := (lv w, la w).
(** The whole location (the pair [cas.rs] [TwoWord] compares): the word and
    its nonce.  In the one-word form every nonce is 0, so comparing [phys2]
    is comparing [phys]. *)
Definition phys2 (w : lword) : (nat * option (bool * nat)) * nat := (phys w, lnc w).

Definition lw_of (c : option cont) : lword := match c with Some (CLoc w) => w | _ => lw0 end.
Definition mw_of (c : option cont) : mword := match c with Some (CMmt w) => w | _ => mw0 end.
Definition hw_of (c : option cont) : hword := match c with Some (CHelp w) => w | _ => hw0 end.

(** The steps that differ between the seed as written (or a mutant) and the
    protocol the code runs. *)
Record config := Cfg {
  c33 : bool;    (* L33: flush loc after the first plain CAS *)
  c35 : bool;    (* L35: flushopt (pwb) of the memento *)
  c38f : bool;   (* L38: the memento's write-back completes before the second plain CAS *)
  c38wb : bool;  (* after L38: pwb of loc, fenced at the commit (perdure's fix) *)
  c20 : bool;    (* L20 (⑥): OWN := memento, pwb memento, memento's parity (Finding 1's fix) *)
  chelp : bool;  (* L13–L16: the helper raises HELP and writes it back *)
  c2w : bool;    (* the two-word location (cas.rs [TwoWord]): L26 writes the nonce t_own;
                    false: the one-word form ([OneWord]), every nonce 0 *)
}.
Definition fixed : config := Cfg true true true true true true false.
(** The fixed protocol on the one-word ([false]) or two-word ([true]) location. *)
Definition fixedw (tw : bool) : config := Cfg true true true true true true tw.

(** LOADHELP's continuation and position. *)
Inductive lhk := KL27 (p : bool) (town : nat) | KL17 | KLoad.
Inductive lhpc :=
  | H4 (a : lword) | H5 (a : lword) (tc : nat) | H10 (a : lword) (tc : nat)
  | H13 (a : lword) (tc thv : nat) | H18 (a : lword) (tc : nat) | H11.
Inductive tpc :=
  | PIdle | P26 (p : bool) (town : nat) | PLH (c : lhk) (y : nat) (h : lhpc)
  | PFail (p : bool) (town : nat) | PFailF | P33 (p : bool) (town : nat)
  | P34 (p : bool) (town : nat) | P36 (p : bool) (ts : nat) | P38 (p : bool) (ts : nat)
  | PCommit (r : bool) | PRec | PRecH (p : bool) (town : nat)
  | PLoad (y v : nat).

Record tstate := TS {
  pc : tpc; kk : nat; ax : nat; ao : nat; an : nat;
  fl : nat; ofl : bool * nat; own : bool * nat; res : list bool;
}.
Definition with_pc (T : tstate) (p : tpc) : tstate :=
  TS p (kk T) (ax T) (ao T) (an T) (fl T) (ofl T) (own T) (res T).
Definition with_own (T : tstate) (o : bool * nat) : tstate :=
  TS (pc T) (kk T) (ax T) (ao T) (an T) (fl T) (ofl T) o (res T).

Record state := St { pm : pmem; wt : list cont; clock : nat; th : nat → tstate }.

Definition upd {A} (f : nat → A) (t : nat) (a : A) : nat → A :=
  λ u, if decide (u = t) then a else f u.

Section model.
  Context (N NL : nat).

  Definition tr (t : nat) : Prop := 1 ≤ t ≤ N.
  Definition LX (x : nat) : nat := x.
  Definition LHl (p : bool) (u : nat) : nat := NL + 2 * u + (if p then 1 else 0).
  Definition LMl (u : nat) : nat := NL + 2 * (N + 1) + u.
  Definition nlines : nat := NL + 3 * (N + 1).

  (** *** Views of the memory *)
  Definition wdec (wr : list (nat * nat)) : nat := match wr with [(_, n)] => n | _ => 0 end.
  Definition ids (s : state) (L : nat) : list nat := wdec <$> line_hist (p_mem (pm s)) L.
  Definition hc (s : state) (L : nat) : list (option cont) := (λ n, wt s !! n) <$> ids s L.
  Definition hx (s : state) (x : nat) : list lword := lw_of <$> hc s (LX x).
  Definition hm (s : state) (u : nat) : list mword := mw_of <$> hc s (LMl u).
  Definition hh (s : state) (p : bool) (u : nat) : list hword := hw_of <$> hc s (LHl p u).
  Definition visx (s : state) (x : nat) : lword := default lw0 (last (hx s x)).
  Definition vism (s : state) (u : nat) : mword := default mw0 (last (hm s u)).
  Definition hval (l : list hword) : nat := hts (default hw0 (last l)).
  Definition vish (s : state) (p : bool) (u : nat) : nat := hval (hh s p u).
  Definition mk (s : state) (L : nat) : nat := mark (p_mem (pm s)) L.
  Definition pwbs (s : state) : list (nat * nat * nat) := p_pwbs (pm s).

  (** *** Changes of the state *)
  Definition pwrite (s : state) (L : nat) (c : cont) : state :=
    St (p_write (pm s) L [(L, length (wt s))]) (wt s ++ [c]) (clock s) (th s).
  Definition ppwb (s : state) (t L : nat) : state := St (p_pwb id (pm s) t L) (wt s) (clock s) (th s).
  Definition pfence (s : state) (t : nat) : state := St (p_fence (pm s) t) (wt s) (clock s) (th s).
  Definition tick (s : state) : state := St (pm s) (wt s) (S (clock s)) (th s).
  Definition setth (s : state) (t : nat) (T : tstate) : state :=
    St (pm s) (wt s) (clock s) (upd (th s) t T).
  (** A thread crash: the thread's write-backs never take effect (the
      weakest choice for an orphaned [pwb]). *)
  Definition drop_pwbs (s : state) (t : nat) : state :=
    St (PMem (p_mem (pm s)) (filter (λ pw, pw.1.1 ≠ t) (p_pwbs (pm s)))) (wt s) (clock s) (th s).

  (** A full crash keeping [keep L] writes of each line [L]: the image
      becomes the memory, all of it persisted. *)
  Definition crash_mem (m : mem) (keep : nat → nat) : mem :=
    Mem (imap (λ L ws, take (keep L) ws) (m_lines m)) (imap (λ L _, keep L) (m_lines m)).
  Definition crash_pc (p : tpc) : tpc :=
    match p with PIdle | PLH KLoad _ _ | PLoad _ _ => PIdle | _ => PRec end.
  (** A thread crash: as a full crash, except that a LOAD runs again from
      its first load (its value, in a register, is lost; the runtime re-runs
      the root operation the load is part of): [H11]'s [old := LOADPLAIN(loc);
      goto 2] is that load. *)
  Definition tcrash_pc (p : tpc) : tpc :=
    match p with PLH KLoad y _ | PLoad y _ => PLH KLoad y H11 | _ => crash_pc p end.
  (** OWN at start-up: the newer of the committed [own_floor] and the
      memento's successful checkpoint (Runtime::open, compose.rs Scan::cas). *)
  Definition own_init (T : tstate) (m : mword) : bool * nat :=
    if negb (mfail m) && bool_decide ((ofl T).2 < mts m) then (mpar m, mts m) else ofl T.
  Definition crash_pm (p : pmem) (keep : nat → nat) : pmem := PMem (crash_mem (p_mem p) keep) [].
  (** A thread after a full crash: what its program counter and OWN become. *)
  Definition reinit (s : state) (keep : nat → nat) (u : nat) : tstate :=
    let s1 := St (crash_pm (pm s) keep) (wt s) (clock s) (th s) in
    let T := th s u in
    with_own (with_pc T (crash_pc (pc T))) (own_init T (vism s1 u)).

  (** *** LOADHELP's returns *)
  Definition lh_ret (T : tstate) (c : lhk) (y v : nat) : tpc :=
    match c with
    | KL27 p town => if decide (v = ao T) then P26 p town else PFail p town
    | KL17 => PCommit false
    | KLoad => PLoad y v
    end.
  Definition lh_enter (T : tstate) (c : lhk) (y : nat) (w : lword) : tpc :=
    match la w with None => lh_ret T c y (lv w) | Some _ => PLH c y (H4 w) end.
  Definition held (h : lhpc) : option lword :=
    match h with
    | H4 a | H5 a _ | H10 a _ | H13 a _ _ | H18 a _ => Some a
    | H11 => None
    end.
  (** The HELP entry of an annotated word, and the invocation it names. *)
  Definition hline (a : lword) : nat := match la a with Some (p, u) => LHl p u | None => 0 end.
  Definition htag (a : lword) : option nat := match lg a with Some (_, k) => Some k | None => None end.

  (** (H-ABA), the precondition of [impl/perdure-memento/src/cas.rs] (module
      docs, "Precondition: no ABA on an annotated word"): "a thread never
      re-installs the same value with the same parity while a helper may hold
      its earlier annotated word".  The first plain CAS of thread [t] writing
      the word [w] to location [x] in state [s] satisfies it when no helper
      holds, for [x], a word with the same value, parity and tid. *)
  Definition h_aba (s : state) (x : nat) (w : lword) : Prop :=
    ∀ u c y h a, pc (th s u) = PLH c y h → held h = Some a → y = x → phys a ≠ phys w.
  (** The same on whole locations (word and nonce): what the invariant's
      proof needs; implied by [h_aba], and, for the two-word location, proved
      of every run in [DetCasPxTwoWord.v] (a helper holds an older nonce). *)
  Definition h_aba2 (s : state) (x : nat) (w : lword) : Prop :=
    ∀ u c y h a, pc (th s u) = PLH c y h → held h = Some a → y = x → phys2 a ≠ phys2 w.
  Lemma h_aba_aba2 s x w : h_aba s x w → h_aba2 s x w.
  Proof. intros H u c y h a Hpc Hh Hy Heq. apply (H u c y h a Hpc Hh Hy). unfold phys2 in Heq. congruence. Qed.
End model.

Section steps.
  Context (N NL : nat) (cfg : config) (aba : state → nat → lword → Prop).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation hh := (hh NL).
  Notation hline := (hline NL).
  Notation reinit := (reinit N NL).

  Inductive step : state → state → Prop :=
  (** Algorithm 1, L5–L8 (cas.rs DetectableCasAtomic::cas, [rt.own(tid)]):
      a new invocation with stable arguments reads OWN and toggles its
      parity; [Handle::try_run_root] starts the root operation. *)
  | SStart s t x o n : tr t → pc (th s t) = PIdle → x < NL →
      let T := th s t in
      step s (setth s t (TS (P26 (negb (own T).1) (own T).2) (kk T) x o n (fl T) (ofl T) (own T) (res T)))
  (** The same in recovery mode (after a crash of the thread or of the
      system, [h.rec()]): L9. *)
  | SStartRec s t x o n : tr t → pc (th s t) = PIdle → x < NL →
      let T := th s t in
      step s (setth s t (TS PRec (kk T) x o n (fl T) (ofl T) (own T) (res T)))
  (** LOAD (Algorithm 1, L1–L3, DetectableCasAtomic::load): a load, then
      LOADHELP; not detectable.  LOADHELP's clean value [v] ([lh_ret]: L3,
      L7 or L21) is kept, [PLoad y v], until LOAD returns it. *)
  | SLoad s t y : tr t → pc (th s t) = PIdle → y < NL →
      step s (setth s t (with_pc (th s t) (lh_enter (th s t) KLoad y (visx s y))))
  (** LOAD returns [v] ([load]'s [return c.value] or [self.load_help(h, cur)]). *)
  | SLoadRet s t y v : tr t → pc (th s t) = PLoad y v →
      step s (setth s t (with_pc (th s t) PIdle))
  (** L26, the first plain CAS ([h.cas(self.off, old_w, new_w)]; a locked
      RMW: the thread's write-backs complete first), from the stable [old] to
      [new] annotated with the parity and the tid; in the two-word form
      ([c2w]) with the nonce t_own, OWN's timestamp read at L6
      ([new_w = F::encode(annotation(p_new), own.ts)]; [town]).  The
      comparison is of the word: a clean word's nonce is 0, so it is the
      code's comparison with [old_w] ([DetCasPxTwoWord.v],
      [tw_l26_compare]). *)
  | S26ok s t p town : tr t → pc (th s t) = P26 p town →
      let T := th s t in
      let w := LW (an T) (Some (p, t)) (if c2w cfg then town else 0) (Some (t, kk T)) in
      phys (visx (pfence s t) (ax T)) = (ao T, None) → aba s (ax T) w →
      step s (setth (pwrite (pfence s t) (LX (ax T)) (CLoc w)) t (with_pc T (P33 p town)))
  (** L26 fails: L27, LOADHELP of the word seen. *)
  | S26fail s t p town : tr t → pc (th s t) = P26 p town →
      let T := th s t in
      phys (visx (pfence s t) (ax T)) ≠ (ao T, None) →
      step s (setth (pfence s t) t (with_pc T (lh_enter T (KL27 p town) (ax T) (visx (pfence s t) (ax T)))))
  (** Algorithm 2, L4: [t_cur := rdtscp; lfence] ([h.now()] in load_help). *)
  | SH4 s t c y a : tr t → pc (th s t) = PLH c y (H4 a) →
      step s (setth (tick s) t (with_pc (th s t) (PLH c y (H5 a (clock s)))))
  (** L5–L7: the word is stable: return its value ([patience::wait]'s
      [Waited::Clean]). *)
  | SH5clean s t c y a tc : tr t → pc (th s t) = PLH c y (H5 a tc) → la (visx s y) = None →
      step s (setth s t (with_pc (th s t) (lh_ret (th s t) c y (lv (visx s y)))))
  (** L8: another word: [old := cur; goto 4] ([Waited::Changed]).  Here
      and at L9 and L18, LOADHELP compares whole locations (word and nonce,
      [phys2]), as the two-word form does; in the one-word form every nonce
      is 0 ([DetCasPxTwoWord.v], [one_word_phys2]). *)
  | SH5chg s t c y a tc : tr t → pc (th s t) = PLH c y (H5 a tc) → la (visx s y) ≠ None →
      phys2 (visx s y) ≠ phys2 a →
      step s (setth s t (with_pc (th s t) (PLH c y (H4 (visx s y)))))
  (** L9: the same word when patience ran out ([Waited::Expired]); when it
      runs out is the scheduler's choice. *)
  | SH5same s t c y a tc : tr t → pc (th s t) = PLH c y (H5 a tc) → phys2 (visx s y) = phys2 a →
      step s (setth s t (with_pc (th s t) (PLH c y (H10 a tc))))
  (** L10–L11: [t_help := HELP[p_old][tid_old]]; someone helped already:
      reload (L11). *)
  | SH10wait s t c y a tc : tr t → pc (th s t) = PLH c y (H10 a tc) →
      tc ≤ hval (hh s (match la a with Some (p, _) => p | None => false end)
                              (match la a with Some (_, u) => u | None => 0 end)) →
      step s (setth s t (with_pc (th s t) (PLH c y H11)))
  (** L12: [flushopt loc] (a [pwb], completed by the locked CAS of L13); the
      mutant without L13–L16 goes to L18. *)
  | SH10go s t c y a tc : tr t → pc (th s t) = PLH c y (H10 a tc) →
      let thv := hval (hh s (match la a with Some (p, _) => p | None => false end)
                                   (match la a with Some (_, u) => u | None => 0 end)) in
      thv < tc →
      step s (setth (ppwb s t (LX y)) t (with_pc (th s t)
               (PLH c y (if chelp cfg then H13 a tc thv else H18 a tc))))
  (** L11/L14: [old := LOADPLAIN(loc); goto 2]. *)
  | SH11 s t c y : tr t → pc (th s t) = PLH c y H11 →
      step s (setth s t (with_pc (th s t) (lh_enter (th s t) c y (visx s y))))
  (** L13, L16: [CASPLAIN(HELP[p_old][tid_old], t_help, t_cur)] (locked: the
      thread's write-backs complete first), then [flushopt HELP] (a [pwb],
      completed by L18's locked CAS). *)
  | SH13ok s t c y a tc thv : tr t → pc (th s t) = PLH c y (H13 a tc thv) →
      hval (hh (pfence s t) (match la a with Some (p, _) => p | None => false end)
                                 (match la a with Some (_, u) => u | None => 0 end)) = thv →
      step s (setth (ppwb (pwrite (pfence s t) (hline a) (CHelp (HW tc (htag a)))) t (hline a)) t
               (with_pc (th s t) (PLH c y (H18 a tc))))
  (** L13 fails: L14. *)
  | SH13fail s t c y a tc thv : tr t → pc (th s t) = PLH c y (H13 a tc thv) →
      hval (hh (pfence s t) (match la a with Some (p, _) => p | None => false end)
                                 (match la a with Some (_, u) => u | None => 0 end)) ≠ thv →
      step s (setth (pfence s t) t (with_pc (th s t) (PLH c y H11)))
  (** L17–L18, L21: the helper's second plain CAS (locked), success: return
      the value. *)
  | SH18ok s t c y a tc : tr t → pc (th s t) = PLH c y (H18 a tc) →
      phys2 (visx (pfence s t) y) = phys2 a →
      step s (setth (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) t
               (with_pc (th s t) (lh_ret (th s t) c y (lv a))))
  (** L18–L19: it fails: [old := cur; goto 2]. *)
  | SH18fail s t c y a tc : tr t → pc (th s t) = PLH c y (H18 a tc) →
      phys2 (visx (pfence s t) y) ≠ phys2 a →
      step s (setth (pfence s t) t (with_pc (th s t) (lh_enter (th s t) c y (visx (pfence s t) y))))
  (** L29–L30: [ts_fail := encodeTs(Fail, rdtscp)] (the code's timestamp,
      Finding 2's fix); [STOREPLAIN(mmt, ts_fail)] ([h.store]). *)
  | SFail s t p town : tr t → pc (th s t) = PFail p town →
      step s (setth (tick (pwrite s (LMl t) (CMmt (MW false true (clock s) (Some (kk (th s t)))))))
               t (with_pc (th s t) PFailF))
  (** L30: [flush mmt] ([h.flush]: a [pwb], its fence at the commit). *)
  | SFailF s t : tr t → pc (th s t) = PFailF →
      step s (setth (ppwb s t (LMl t)) t (with_pc (th s t) (PCommit false)))
  (** L33: [flush loc] ([h.flush(self.off, 8)]: [pwb] and [pfence], one
      step: a crash between them is a crash before the [pwb]). *)
  | S33 s t p town : tr t → pc (th s t) = P33 p town →
      step s (setth (if c33 cfg then pfence (ppwb s t (LX (ax (th s t)))) t else s) t
               (with_pc (th s t) (P34 p town)))
  (** L34–L35: [ts_succ := encodeTs(¬p_own, rdtscp)]; [STOREPLAIN(mmt, ts_succ)];
      [flushopt mmt] ([h.store], [h.pwb]). *)
  | S34 s t p town : tr t → pc (th s t) = P34 p town →
      let s1 := pwrite s (LMl t) (CMmt (MW p false (clock s) (Some (kk (th s t))))) in
      step s (setth (tick (if c35 cfg then ppwb s1 t (LMl t) else s1)) t
               (with_pc (th s t) (P36 p (clock s))))
  (** L36: [STOREPLAIN(OWN[tid], ts_succ)] ([rt.set_own]; DRAM). *)
  | S36 s t p ts : tr t → pc (th s t) = P36 p ts →
      step s (setth s t (with_own (with_pc (th s t) (P38 p ts)) (p, ts)))
  (** L37–L38 (second_cas): the memento's write-back completes (the locked
      CAS, or [fence_unless_rmw_fences]); [CASPLAIN(loc, new', new'')]
      (fails if a helper did it); then (perdure, not the seed) [pwb loc],
      whose fence is deferred to the commit ([h.defer_fence]). *)
  | S38 s t p ts : tr t → pc (th s t) = P38 p ts →
      let T := th s t in
      let s1 := if c38f cfg then pfence s t else s in
      let s2 := if decide (phys (visx s1 (ax T)) = (an T, Some (p, t)))
                then pwrite s1 (LX (ax T)) (CLoc (LW (an T) None 0 None)) else s1 in
      step s (setth (if c38wb cfg then ppwb s2 t (LX (ax T)) else s2) t (with_pc T (PCommit true)))
  (** L39 / L31 / L17 and the root operation's commit
      (runtime.rs Handle::try_run_root, step 3 and [end_section]): the
      deferred fence; [floor := now], [own_floor := OWN], the result, the
      next operation's index, in one line persisted at once (a torn commit
      never moves the floor of the operation it belongs to, runtime.rs "Why
      two floors"). *)
  | SCommit s t r : tr t → pc (th s t) = PCommit r →
      let T := th s t in
      step s (setth (tick (pfence s t)) t
               (TS PIdle (S (kk T)) (ax T) (ao T) (an T) (clock s) (own T) (own T) (res T ++ [r])))
  (** Recovery, L10–L14 ([h.load(mmt.off)], [h.load(self.off)], LOCAL = the
      floor), L15–L17 (④): the memento is this invocation's failure: ERR,
      with LOADHELP of the word read. *)
  | SRec4 s t : tr t → pc (th s t) = PRec →
      fl (th s t) < mts (vism s t) → mfail (vism s t) = true →
      step s (setth s t (with_pc (th s t) (lh_enter (th s t) KL17 (ax (th s t)) (visx s (ax (th s t))))))
  (** L19 (⑤): a success that is not the thread's last CAS: OK. *)
  | SRec5 s t : tr t → pc (th s t) = PRec →
      fl (th s t) < mts (vism s t) → mfail (vism s t) = false → mts (vism s t) < (own (th s t)).2 →
      step s (setth s t (with_pc (th s t) (PCommit true)))
  (** L20 (⑥): the thread's last CAS: redo the second plain CAS.  Fixed (the
      code): OWN := the memento, [pwb mmt] again, the memento's parity.  As
      written: [goto 38] with [new' = encode(¬p_own, tid, new)]. *)
  | SRec6 s t : tr t → pc (th s t) = PRec →
      let m := vism s t in
      fl (th s t) < mts m → mfail m = false → (own (th s t)).2 ≤ mts m →
      step s (if c20 cfg
              then setth (ppwb s t (LMl t)) t (with_own (with_pc (th s t) (P38 (mpar m) (mts m))) (mpar m, mts m))
              else setth s t (with_pc (th s t) (P38 (negb (own (th s t)).1) (mts m))))
  (** L21–L22 (⑦): the location holds this CAS's annotated word (the code
      also compares the parity): resume at L33. *)
  | SRec7 s t : tr t → pc (th s t) = PRec →
      mts (vism s t) ≤ fl (th s t) →
      phys (visx s (ax (th s t))) = (an (th s t), Some (negb (own (th s t)).1, t)) →
      step s (setth s t (with_pc (th s t) (P33 (negb (own (th s t)).1) (own (th s t)).2)))
  | SRecH s t : tr t → pc (th s t) = PRec →
      mts (vism s t) ≤ fl (th s t) →
      phys (visx s (ax (th s t))) ≠ (an (th s t), Some (negb (own (th s t)).1, t)) →
      step s (setth s t (with_pc (th s t) (PRecH (negb (own (th s t)).1) (own (th s t)).2)))
  (** L23–L24 (⑧): [t_own < HELP[¬p_own][tid]]: helped, resume at L34. *)
  | SRec8 s t p town : tr t → pc (th s t) = PRecH p town → town < vish s p t →
      step s (setth s t (with_pc (th s t) (P34 p town)))
  (** L25 (⑨): resume the normal execution. *)
  | SRec9 s t p town : tr t → pc (th s t) = PRecH p town → vish s p t ≤ town →
      step s (setth s t (with_pc (th s t) (P26 p town)))
  (** A thread crash (§2.5 (3)): registers lost, OWN, LOCAL and PM kept, the
      thread's issued write-backs orphaned (here: never taking effect); the
      operation is re-run in recovery mode, a LOAD from its first load
      ([tcrash_pc]). *)
  | STCrash s t : tr t →
      step s (setth (drop_pwbs s t) t (with_pc (th s t) (tcrash_pc (th s t).(pc))))
  (** A full-system crash: any image Px86 allows ([p_crash_ok]: each line
      keeps a prefix at least as long as its mark); DRAM lost, OWN
      re-initialised; every operation cut off is re-run in recovery mode. *)
  | SCrash s keep f : p_crash_ok (pm s) keep →
      (∀ u, tr u → f u = reinit s keep u) → (∀ u, ¬ tr u → f u = th s u) →
      step s (St (crash_pm (pm s) keep) (wt s) (clock s) f).

  Definition init : state :=
    St (pmem_empty (nlines N NL)) [] 1 (λ _, TS PIdle 0 0 0 0 0 (false, 0) (false, 0) []).

  Definition reachable (s : state) : Prop := rtc step init s.
End steps.

(** A weaker premise at L26 allows more runs. *)
(** A step of one instance as the same rule of another: [destruct] on the
    step [H], each case re-applying its own constructor (its premises left
    to the caller). *)
Ltac step_same_rule H :=
  destruct H;
    [eapply SStart | eapply SStartRec | eapply SLoad | eapply SLoadRet | eapply S26ok | eapply S26fail | eapply SH4
    | eapply SH5clean | eapply SH5chg | eapply SH5same | eapply SH10wait | eapply SH10go | eapply SH11
    | eapply SH13ok | eapply SH13fail | eapply SH18ok | eapply SH18fail | eapply SFail | eapply SFailF
    | eapply S33 | eapply S34 | eapply S36 | eapply S38 | eapply SCommit | eapply SRec4 | eapply SRec5
    | eapply SRec6 | eapply SRec7 | eapply SRecH | eapply SRec8 | eapply SRec9 | eapply STCrash
    | eapply SCrash].

Lemma step_mono N NL cfg (aba aba' : state → nat → lword → Prop) s s' :
  (∀ s x w, aba s x w → aba' s x w) → step N NL cfg aba s s' → step N NL cfg aba' s s'.
Proof. intros Himp Hs. step_same_rule Hs; eauto. Qed.

Lemma rtc_step_mono N NL cfg (aba aba' : state → nat → lword → Prop) s s' :
  (∀ s x w, aba s x w → aba' s x w) → rtc (step N NL cfg aba) s s' → rtc (step N NL cfg aba') s s'.
Proof.
  intros Himp H. induction H as [| s1 s2 s3 Hs _ IH]; [done |]. eapply rtc_l; [| exact IH].
  by eapply step_mono.
Qed.

(** The step relation under another name (the theorems' [step] is a
    notation for its instance with [fixed] and [h_aba]). *)
Notation stepg := step (only parsing).

(** ** The memory views under the steps' changes *)
Section infra.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation nlines := (nlines N NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).

  Lemma LX_LH x p u : x < NL → LX x ≠ LHl p u.
  Proof. unfold LX, LHl. destruct p; lia. Qed.
  Lemma LX_LM x u : x < NL → LX x ≠ LMl u.
  Proof. unfold LX, LMl. lia. Qed.
  Lemma LH_LM p u u' : u ≤ N → LHl p u ≠ LMl u'.
  Proof. unfold LHl, LMl. destruct p; lia. Qed.
  Lemma LH_inj p u p' u' : LHl p u = LHl p' u' → p = p' ∧ u = u'.
  Proof. unfold LHl. destruct p, p'; intros; split; try done; lia. Qed.
  Lemma LM_inj u u' : LMl u = LMl u' → u = u'.
  Proof. unfold LMl. lia. Qed.
  Lemma LX_lt x : x < NL → LX x < nlines.
  Proof. unfold LX, nlines. lia. Qed.
  Lemma LH_lt p u : u ≤ N → LHl p u < nlines.
  Proof. unfold LHl, nlines. destruct p; lia. Qed.
  Lemma LM_lt u : u ≤ N → LMl u < nlines.
  Proof. unfold LMl, nlines. lia. Qed.

  Definition nl_ok (s : state) : Prop := length (m_lines (p_mem (pm s))) = nlines.
  Definition ids_ok (s : state) : Prop := ∀ L n, n ∈ ids s L → n < length (wt s).

  Lemma line_hist_write m L w L' : L < length (m_lines m) →
    line_hist (mem_write m L w) L' = if decide (L' = L) then line_hist m L ++ [w] else line_hist m L'.
  Proof.
    intros HL. unfold line_hist, mem_write; simpl. case_decide as Heq.
    - subst. rewrite list_lookup_insert by done. done.
    - rewrite list_lookup_insert_ne by done. done.
  Qed.

  Lemma ids_pwrite s L c L' : L < length (m_lines (p_mem (pm s))) →
    ids (pwrite s L c) L' = ids s L' ++ (if decide (L' = L) then [length (wt s)] else []).
  Proof.
    intros HL. unfold ids, pwrite, p_write; simpl. rewrite line_hist_write by done.
    case_decide; subst; rewrite ?fmap_app; simpl; [done | by rewrite app_nil_r].
  Qed.

  Lemma hc_pwrite s L c L' : ids_ok s → L < length (m_lines (p_mem (pm s))) →
    hc (pwrite s L c) L' = hc s L' ++ (if decide (L' = L) then [Some c] else []).
  Proof.
    intros Hok HL. unfold hc. rewrite ids_pwrite by done. rewrite fmap_app. f_equal.
    - apply list_fmap_ext. intros i n Hi. simpl. apply lookup_app_l.
      apply (Hok L'). by eapply elem_of_list_lookup_2.
    - case_decide; simpl; [| done]. rewrite lookup_app_r by lia. by rewrite Nat.sub_diag.
  Qed.

  Lemma ids_ok_pwrite s L c : ids_ok s → L < length (m_lines (p_mem (pm s))) → ids_ok (pwrite s L c).
  Proof.
    intros Hok HL L' n. rewrite ids_pwrite by done. rewrite elem_of_app. simpl. rewrite app_length. simpl.
    intros [Hn | Hn]; [specialize (Hok L' n Hn); lia |].
    case_decide; [apply elem_of_list_singleton in Hn; lia | by apply elem_of_nil in Hn].
  Qed.

  Lemma pwrite_lines s L c : length (m_lines (p_mem (pm (pwrite s L c)))) = length (m_lines (p_mem (pm s))).
  Proof. apply mem_write_lines. Qed.

  (** Unchanged views. *)
  Lemma ids_ppwb s t L L' : ids (ppwb s t L) L' = ids s L'.
  Proof. done. Qed.
  Lemma ids_pfence s t L : ids (pfence s t) L = ids s L.
  Proof. unfold ids, pfence. cbn [pm]. by rewrite p_fence_hist. Qed.
  Lemma mk_pwrite s L c L' : mk (pwrite s L c) L' = mk s L'.
  Proof. done. Qed.
  Lemma mk_ppwb s t L L' : mk (ppwb s t L) L' = mk s L'.
  Proof. done. Qed.
  Lemma mk_pfence s t L : mk s L ≤ mk (pfence s t) L.
  Proof. apply p_fence_mark_mono. Qed.
  Lemma pwbs_ppwb s t L : pwbs (ppwb s t L) = (t, L, length (ids s L)) :: pwbs s.
  Proof. unfold pwbs, ppwb, p_pwb, ids; simpl. by rewrite fmap_length. Qed.
  Lemma pwbs_pfence s t : pwbs (pfence s t) = filter (λ pw, pw.1.1 ≠ t) (pwbs s).
  Proof. done. Qed.
  Lemma pfence_lines s t : length (m_lines (p_mem (pm (pfence s t)))) = length (m_lines (p_mem (pm s))).
  Proof. unfold pfence, p_fence. cbn [pm p_mem]. by rewrite foldr_fence_lines. Qed.

  Lemma hc_pfence s t L : hc (pfence s t) L = hc s L.
  Proof. unfold hc. by rewrite ids_pfence. Qed.

  (** A fence covers the thread's write-backs. *)
  Lemma mk_pfence_covers s t L n :
    p_wf (pm s) → (t, L, n) ∈ pwbs s → L < length (m_lines (p_mem (pm s))) → n ≤ mk (pfence s t) L.
  Proof. intros. by apply p_fence_covers. Qed.

  (** The crash's memory. *)
  Lemma crash_hist m keep L :
    line_hist (crash_mem m keep) L = take (keep L) (line_hist m L).
  Proof.
    unfold line_hist, crash_mem; simpl. rewrite list_lookup_imap.
    destruct (m_lines m !! L); simpl; [done | by rewrite take_nil].
  Qed.

  Lemma crash_mark m keep L : L < length (m_lines m) → mark (crash_mem m keep) L = keep L.
  Proof.
    intros HL. unfold mark, crash_mem; simpl. rewrite list_lookup_imap.
    destruct (lookup_lt_is_Some_2 _ _ HL) as [ws ->]. done.
  Qed.

  Lemma crash_lines m keep : length (m_lines (crash_mem m keep)) = length (m_lines m).
  Proof. unfold crash_mem; simpl. by rewrite imap_length. Qed.

  Lemma crash_pm_wf p keep : p_crash_ok p keep → p_wf (crash_pm p keep).
  Proof.
    intros Hok. split; [| split; [| constructor]]; simpl.
    - by rewrite !imap_length.
    - intros L. destruct (decide (L < length (m_lines (p_mem p)))) as [HL | HL].
      + rewrite crash_mark, crash_hist by done. rewrite take_length.
        specialize (Hok L HL). unfold line_hist in Hok |- *. lia.
      + unfold mark, crash_mem; simpl. rewrite list_lookup_imap.
        rewrite (lookup_ge_None_2 (m_lines (p_mem p)) L) by lia. simpl. lia.
  Qed.
End infra.

Section views.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation nlines := (nlines N NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation nl_ok := (nl_ok N NL).

  Lemma hx_wloc s x c x' : ids_ok s → nl_ok s → x < NL →
    hx (pwrite s (LX x) c) x' = hx s x' ++ (if decide (x' = x) then [lw_of (Some c)] else []).
  Proof.
    intros Hok Hnl Hx. unfold hx. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LX_lt].
    rewrite fmap_app. unfold LX. by case_decide.
  Qed.
  Lemma hm_wloc s x c u : ids_ok s → nl_ok s → x < NL → hm (pwrite s (LX x) c) u = hm s u.
  Proof.
    intros Hok Hnl Hx. unfold hm. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LX_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LX_LM N NL x u).
  Qed.
  Lemma hh_wloc s x c p u : ids_ok s → nl_ok s → x < NL → hh (pwrite s (LX x) c) p u = hh s p u.
  Proof.
    intros Hok Hnl Hx. unfold hh. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LX_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LX_LH NL x p u).
  Qed.
  Lemma hm_wm s u c u' : ids_ok s → nl_ok s → u ≤ N →
    hm (pwrite s (LMl u) c) u' = hm s u' ++ (if decide (u' = u) then [mw_of (Some c)] else []).
  Proof.
    intros Hok Hnl Hu. unfold hm. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LM_lt].
    rewrite fmap_app. f_equal. destruct (decide (u' = u)) as [-> | Hne].
    - by rewrite decide_True.
    - rewrite decide_False; [done |]. intros ?%LM_inj. done.
  Qed.
  Lemma hx_wm s u c x : ids_ok s → nl_ok s → u ≤ N → x < NL → hx (pwrite s (LMl u) c) x = hx s x.
  Proof.
    intros Hok Hnl Hu Hx. unfold hx. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LM_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LX_LM N NL x u).
  Qed.
  Lemma hh_wm s u c p u' : ids_ok s → nl_ok s → u ≤ N → u' ≤ N → hh (pwrite s (LMl u) c) p u' = hh s p u'.
  Proof.
    intros Hok Hnl Hu Hu'. unfold hh. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LM_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LH_LM N NL p u' u).
  Qed.
  Lemma hh_wh s p u c p' u' : ids_ok s → nl_ok s → u ≤ N →
    hh (pwrite s (LHl p u) c) p' u' = hh s p' u' ++ (if decide (p' = p ∧ u' = u) then [hw_of (Some c)] else []).
  Proof.
    intros Hok Hnl Hu. unfold hh. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LH_lt].
    rewrite fmap_app. f_equal. destruct (decide (p' = p ∧ u' = u)) as [[-> ->] | Hne].
    - by rewrite decide_True.
    - rewrite decide_False; [done |]. intros ?%LH_inj. done.
  Qed.
  Lemma hx_wh s p u c x : ids_ok s → nl_ok s → u ≤ N → x < NL → hx (pwrite s (LHl p u) c) x = hx s x.
  Proof.
    intros Hok Hnl Hu Hx. unfold hx. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LH_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LX_LH NL x p u).
  Qed.
  Lemma hm_wh s p u c u' : ids_ok s → nl_ok s → u ≤ N → hm (pwrite s (LHl p u) c) u' = hm s u'.
  Proof.
    intros Hok Hnl Hu. unfold hm. rewrite hc_pwrite; [| done | rewrite Hnl; by apply LH_lt].
    rewrite decide_False; [by rewrite app_nil_r |]. intros Heq. by apply (LH_LM N NL p u u').
  Qed.

  Lemma hx_pfence s t x : hx (pfence s t) x = hx s x.
  Proof. unfold hx. by rewrite hc_pfence. Qed.
  Lemma hm_pfence s t u : hm (pfence s t) u = hm s u.
  Proof. unfold hm. by rewrite hc_pfence. Qed.
  Lemma hh_pfence s t p u : hh (pfence s t) p u = hh s p u.
  Proof. unfold hh. by rewrite hc_pfence. Qed.

  (** HELP histories: values increase, so a longer prefix has a larger value. *)
  Definition incr (l : list hword) : Prop :=
    (∀ i w w', l !! i = Some w → l !! S i = Some w' → hts w < hts w') ∧ (∀ w, w ∈ l → 0 < hts w).

  Lemma incr_le l i j w w' : incr l → i ≤ j → l !! i = Some w → l !! j = Some w' → hts w ≤ hts w'.
  Proof.
    intros [Hinc _] Hij. revert w'. induction Hij as [| j Hij IH]; intros w' Hi Hj.
    - rewrite Hi in Hj. by injection Hj as ->.
    - destruct (lookup_lt_is_Some_2 l j) as [w'' Hw'']; [apply lookup_lt_Some in Hj; lia |].
      specialize (IH w'' Hi Hw''). specialize (Hinc _ _ _ Hw'' Hj). lia.
  Qed.

  Lemma hval_take_mono l n m : incr l → n ≤ m → hval (take n l) ≤ hval (take m l).
  Proof.
    intros Hl Hnm. unfold hval. rewrite !last_lookup, !take_length.
    destruct (decide (n `min` length l = 0)) as [H0 | H0].
    - rewrite H0. simpl. rewrite (lookup_ge_None_2 (take n l) 0) by (rewrite take_length; lia).
      simpl. lia.
    - rewrite !lookup_take by lia.
      destruct (lookup_lt_is_Some_2 l (pred (n `min` length l))) as [w Hw]; [lia |].
      destruct (lookup_lt_is_Some_2 l (pred (m `min` length l))) as [w' Hw']; [lia |].
      rewrite Hw, Hw'. simpl. eapply incr_le; [done | | done | done]. lia.
  Qed.

  Lemma hval_take_le l n : incr l → hval (take n l) ≤ hval l.
  Proof.
    intros Hl. rewrite <- (take_ge l (length l)) at 2 by lia.
    destruct (decide (n ≤ length l)); [by apply hval_take_mono |].
    rewrite take_ge by lia. rewrite take_ge; lia.
  Qed.

  Lemma hval_snoc l w : hval (l ++ [w]) = hts w.
  Proof. unfold hval. by rewrite last_snoc. Qed.

  Lemma incr_snoc l w : incr l → hval l < hts w → incr (l ++ [w]).
  Proof.
    intros [Hinc Hpos] Hlt. split.
    - intros i a b Ha Hb. destruct (decide (S i < length l)).
      + rewrite lookup_app_l in Ha by lia. rewrite lookup_app_l in Hb by lia. eauto.
      + apply lookup_app_Some in Hb as [Hb | [Hle Hb]]; [apply lookup_lt_Some in Hb; lia |].
        rewrite list_lookup_singleton_Some in Hb. destruct Hb as [Hi <-].
        assert (i = pred (length l)) as -> by lia.
        rewrite lookup_app_l in Ha by lia. unfold hval in Hlt. rewrite last_lookup, Ha in Hlt. done.
    - intros a [Ha | ->%elem_of_list_singleton]%elem_of_app; [by apply Hpos |]. unfold hval in Hlt. lia.
  Qed.

  Lemma incr_take l n : incr l → incr (take n l).
  Proof.
    intros [Hinc Hpos]. split.
    - intros i a b Ha Hb. rewrite lookup_take_Some in Ha. rewrite lookup_take_Some in Hb. naive_solver.
    - intros a Ha. apply Hpos. apply elem_of_take in Ha as (i & Hi & _). by eapply elem_of_list_lookup_2.
  Qed.
End views.

(** ** The invariant of the fixed protocol *)
Section invariant.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation nlines := (nlines N NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).

  (** The parity of the thread's current invocation: ¬ the parity of its
      last committed success ([own_floor]). *)
  Definition par (T : tstate) : bool := negb (ofl T).1.
  (** Invocation [k] of thread [u] took effect: its first plain CAS is the
      [i]-th write of location [x]'s history (since the last crash, the
      crash image's writes included). *)
  Definition tookat (s : state) (u k x i : nat) : Prop := ∃ w, hx s x !! i = Some w ∧ lg w = Some (u, k).
  Definition eff (s : state) (u k : nat) : Prop := ∃ x i, x < NL ∧ tookat s u k x i.
  (** ... and every crash image keeps it. *)
  Definition durable (s : state) (u k : nat) : Prop :=
    ∃ x i, x < NL ∧ tookat s u k x i ∧ i < mk s (LX x).

  Definition nokm (s : state) (u : nat) : Prop := ∀ w, w ∈ hm s u → mg w ≠ Some (kk (th s u)).
  Definition lastm (s : state) (u : nat) (P : mword → Prop) : Prop :=
    ∃ w, last (hm s u) = Some w ∧ mg w = Some (kk (th s u)) ∧ P w.
  Definition mdur (s : state) (u : nat) : Prop :=
    mk s (LMl u) = length (hm s u) ∧ lastm s u (λ w, mfail w = false).
  Definition mpend (s : state) (u : nat) : Prop :=
    (u, LMl u, length (hm s u)) ∈ pwbs s ∨ mk s (LMl u) = length (hm s u).
  Definition lcov (s : state) (w y i : nat) : Prop :=
    (∃ n, (w, LX y, n) ∈ pwbs s ∧ i < n) ∨ i < mk s (LX y).
  Definition hcov (s : state) (w : nat) (p : bool) (u tc : nat) : Prop :=
    (∃ n, (w, LHl p u, n) ∈ pwbs s ∧ tc ≤ hval (take n (hh s p u))) ∨
    tc ≤ hval (take (mk s (LHl p u)) (hh s p u)).
  (** The value of HELP[p][u] every crash image keeps at least. *)
  Definition hmk (s : state) (p : bool) (u : nat) : nat := hval (take (mk s (LHl p u)) (hh s p u)).

  Definition annphase (p : tpc) : Prop :=
    match p with P33 _ _ | P34 _ _ | P36 _ _ | P38 _ _ | PRec => True | _ => False end.

  (** The [i]-th write [w] of location [x]: clean, or the annotated word of
      invocation [k] of thread [u], followed only by its clean word, and
      with a successor under the mark once [k] has returned. *)
  Definition locok (s : state) (x i : nat) (w : lword) : Prop :=
    (la w = None ∧ lg w = None) ∨
    ∃ p u k, la w = Some (p, u) ∧ lg w = Some (u, k) ∧ tr u ∧ k ≤ kk (th s u) ∧
      (∀ w', hx s x !! S i = Some w' → la w' = None ∧ lv w' = lv w) ∧
      (k = kk (th s u) → x = ax (th s u) ∧ lv w = an (th s u) ∧ p = par (th s u)) ∧
      (k < kk (th s u) → S i < mk s (LX x)).

  (** The [i]-th write [w] of thread [u]'s memento: the current invocation's
      (newer than the floor, the last write) or an earlier one's. *)
  Definition mmtok (s : state) (u i : nat) (w : mword) : Prop :=
    let T := th s u in
    (mg w = Some (kk T) ∧ fl T < mts w ∧ S i = length (hm s u) ∧
       (mfail w = false → mpar w = par T ∧ durable s u (kk T)) ∧
       (mfail w = true → ¬ eff s u (kk T)))
    ∨ ((∀ k, mg w = Some k → k < kk T) ∧ mts w ≤ fl T ∧ (mfail w = false → mts w ≤ (ofl T).2)).

  (** HELP[p][u]: increasing; each write helped an invocation whose first
      plain CAS is under its location's mark, and (§3.4) is below the
      timestamp of the thread's next success of the same parity. *)
  Definition helpok (s : state) (p : bool) (u : nat) : Prop :=
    incr (hh s p u) ∧
    ∀ w, w ∈ hh s p u → ∃ k, hg w = Some k ∧
      (∃ x j a, x < NL ∧ hx s x !! j = Some a ∧ la a = Some (p, u) ∧ lg a = Some (u, k) ∧ j < mk s (LX x)) ∧
      (k = kk (th s u) ∨ (hts w < fl (th s u) ∧ (p = par (th s u) → hts w ≤ (ofl (th s u)).2))).

  Definition hi (s : state) (p : bool) (u k tc : nat) : Prop :=
    k = kk (th s u) ∨ (tc < fl (th s u) ∧ (p = par (th s u) → tc ≤ (ofl (th s u)).2)).

  (** A helper [w] in LOADHELP on location [y]. *)
  Definition lhok (s : state) (w y : nat) (h : lhpc) : Prop :=
    y < NL ∧
    match held h with
    | None => True
    | Some a => ∃ i p u k, hx s y !! i = Some a ∧ la a = Some (p, u) ∧ lg a = Some (u, k) ∧
        (∀ b, last (hx s y) = Some b → phys2 b = phys2 a → b = a) ∧
        match h with
        | H4 _ | H11 => True
        | H5 _ tc => tc < clock s ∧ (k = kk (th s u) → (ofl (th s u)).2 < tc)
        | H10 _ tc => tc < clock s ∧ (k = kk (th s u) → (ofl (th s u)).2 < tc) ∧ hi s p u k tc
        | H13 _ tc thv => tc < clock s ∧ (k = kk (th s u) → (ofl (th s u)).2 < tc) ∧ hi s p u k tc ∧
            thv < tc ∧ lcov s w y i
        | H18 _ tc => tc < clock s ∧ (k = kk (th s u) → (ofl (th s u)).2 < tc) ∧ hi s p u k tc ∧
            i < mk s (LX y) ∧ hcov s w p u tc
        end
    end.

  Definition idleok (s : state) (u : nat) : Prop :=
    ¬ eff s u (kk (th s u)) ∧ nokm s u ∧ own (th s u) = ofl (th s u).
  Definition pre26 (s : state) (u : nat) (p : bool) (town : nat) : Prop :=
    p = par (th s u) ∧ town = (ofl (th s u)).2 ∧ idleok s u ∧ ax (th s u) < NL.
  Definition failok (s : state) (u : nat) : Prop :=
    ¬ eff s u (kk (th s u)) ∧ lastm s u (λ w, mfail w = true) ∧ own (th s u) = ofl (th s u) ∧
    ax (th s u) < NL.

  (** What LOADHELP's caller needs: L27's (the invocation has not taken
      effect), L17's (a failure checkpointed) or LOAD's (idle). *)
  Definition lhpre (s : state) (u : nat) (c : lhk) (y : nat) : Prop :=
    match c with
    | KL27 p town => pre26 s u p town ∧ y = ax (th s u)
    | KL17 => failok s u ∧ y = ax (th s u)
    | KLoad => idleok s u
    end.

  Definition pcok (s : state) (u : nat) : Prop :=
    let T := th s u in
    match pc T with
    | PIdle => idleok s u
    | PLH c y h => lhpre s u c y ∧ lhok s u y h
    | P26 p town | PFail p town => pre26 s u p town
    | PFailF | PCommit false => failok s u
    | P33 p town => p = par T ∧ town = (ofl T).2 ∧ (∃ i, tookat s u (kk T) (ax T) i) ∧
        nokm s u ∧ own T = ofl T ∧ ax T < NL
    | P34 p town => p = par T ∧ town = (ofl T).2 ∧
        (∃ i, tookat s u (kk T) (ax T) i ∧ i < mk s (LX (ax T))) ∧ nokm s u ∧ own T = ofl T ∧ ax T < NL
    | P36 p ts => p = par T ∧ (∃ i, tookat s u (kk T) (ax T) i ∧ i < mk s (LX (ax T))) ∧
        lastm s u (λ w, mfail w = false ∧ mpar w = p ∧ mts w = ts) ∧ mpend s u ∧ own T = ofl T ∧ ax T < NL
    | P38 p ts => p = par T ∧ (∃ i, tookat s u (kk T) (ax T) i ∧ i < mk s (LX (ax T))) ∧
        lastm s u (λ w, mfail w = false ∧ mpar w = p ∧ mts w = ts) ∧ mpend s u ∧ own T = (p, ts) ∧ ax T < NL
    | PCommit true =>
        (∃ i, tookat s u (kk T) (ax T) i ∧ S i < length (hx s (ax T)) ∧ lcov s u (ax T) (S i)) ∧
        mdur s u ∧ lastm s u (λ w, own T = (mpar w, mts w)) ∧ ax T < NL
    | PRec => ax T < NL
    | PRecH p town => p = par T ∧ town = (ofl T).2 ∧ nokm s u ∧ own T = ofl T ∧ ax T < NL ∧
        (∀ i, tookat s u (kk T) (ax T) i → (ofl T).2 < vish s (par T) u)
    | PLoad y _ => idleok s u ∧ y < NL
    end.

  Record inv (s : state) : Prop := {
    i_wf : p_wf (pm s);
    i_nl : nl_ok s;
    i_ids : ids_ok s;
    i_clock : ∀ u, tr u → fl (th s u) < clock s ∧ (ofl (th s u)).2 ≤ fl (th s u) ∧
                 length (res (th s u)) = kk (th s u);
    i_mclock : ∀ u w, tr u → w ∈ hm s u → mts w < clock s;
    i_hclock : ∀ p u w, tr u → w ∈ hh s p u → hts w < clock s;
    i_loc : ∀ x i w, x < NL → hx s x !! i = Some w → locok s x i w;
    i_once : ∀ u k x i x' i', x < NL → x' < NL → tookat s u k x i → tookat s u k x' i' →
               x = x' ∧ i = i';
    i_res : ∀ u k, tr u → k < kk (th s u) → (res (th s u) !! k = Some true ↔ eff s u k);
    i_mmt : ∀ u i w, tr u → hm s u !! i = Some w → mmtok s u i w;
    i_own : ∀ u, tr u → own (th s u) = ofl (th s u) ∨
              lastm s u (λ w, mfail w = false ∧ own (th s u) = (mpar w, mts w));
    i_help : ∀ p u, tr u → helpok s p u;
    i_cl : ∀ u x i, tr u → x < NL → tookat s u (kk (th s u)) x i → S i < length (hx s x) →
             mdur s u ∨ (ofl (th s u)).2 < hmk s (par (th s u)) u;
    i_vis : ∀ x w p u, x < NL → last (hx s x) = Some w → la w = Some (p, u) →
              lg w = Some (u, kk (th s u)) ∧ annphase (pc (th s u));
    i_pc : ∀ u, tr u → pcok s u;
  }.
End invariant.

Section frame.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hcov := (hcov NL).
  Notation hmk := (hmk NL).
  Notation locok := (locok N).
  Notation mmtok := (mmtok N NL).
  Notation helpok := (helpok NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).

  (** Each write-back of thread [u] pending in [s] is still pending in [s'],
      or has taken effect. *)
  Definition pwok (s s' : state) (u : nat) : Prop :=
    ∀ pw, pw ∈ pwbs s → pw.1.1 = u → pw ∈ pwbs s' ∨ pw.2 ≤ mk s' pw.1.2.

  Lemma th_setth s t T u : th (setth s t T) u = if decide (u = t) then T else th s u.
  Proof. done. Qed.

  (** A step that changes no history: its memory's lines and contents are
      the same, marks only rise, only [t]'s write-backs may go, the clock
      only advances, and only [t]'s registers change. *)
  Record frame (s s' : state) (t : nat) : Prop := {
    fr_lines : m_lines (p_mem (pm s')) = m_lines (p_mem (pm s));
    fr_wt : wt s' = wt s;
    fr_mk : ∀ L, mk s L ≤ mk s' L;
    fr_wf : p_wf (pm s');
    fr_pwbs : ∀ pw, pw.1.1 ≠ t → pw ∈ pwbs s → pw ∈ pwbs s';
    fr_clock : clock s ≤ clock s';
    fr_th : ∀ u, u ≠ t → th s' u = th s u;
    fr_kk : kk (th s' t) = kk (th s t);
    fr_fl : fl (th s' t) = fl (th s t);
    fr_ofl : ofl (th s' t) = ofl (th s t);
    fr_res : res (th s' t) = res (th s t);
    fr_ax : (ax (th s' t) = ax (th s t) ∧ an (th s' t) = an (th s t)) ∨ ¬ eff s t (kk (th s t));
  }.
End frame.
  Arguments fr_lines {_ _ _ _} _.
  Arguments fr_wt {_ _ _ _} _.
  Arguments fr_mk {_ _ _ _} _.
  Arguments fr_wf {_ _ _ _} _.
  Arguments fr_pwbs {_ _ _ _} _.
  Arguments fr_clock {_ _ _ _} _.
  Arguments fr_th {_ _ _ _} _.
  Arguments fr_kk {_ _ _ _} _.
  Arguments fr_fl {_ _ _ _} _.
  Arguments fr_ofl {_ _ _ _} _.
  Arguments fr_res {_ _ _ _} _.
  Arguments fr_ax {_ _ _ _} _.

Section fr.
  Context {N NL : nat}.
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hcov := (hcov NL).
  Notation hmk := (hmk NL).
  Notation locok := (locok N).
  Notation mmtok := (mmtok N NL).
  Notation helpok := (helpok NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).

  Notation frame := (frame NL).
  Context {s s' : state} {t : nat} (Hf : frame s s' t).

    Lemma fr_ids L : ids s' L = ids s L.
    Proof. unfold ids, line_hist. by rewrite (fr_lines Hf). Qed.
    Lemma fr_hc L : hc s' L = hc s L.
    Proof. unfold hc. by rewrite fr_ids, (fr_wt Hf). Qed.
    Lemma fr_hx x : hx s' x = hx s x.
    Proof. unfold hx. by rewrite fr_hc. Qed.
    Lemma fr_hm u : hm s' u = hm s u.
    Proof. unfold hm. by rewrite fr_hc. Qed.
    Lemma fr_hh p u : hh s' p u = hh s p u.
    Proof. unfold hh. by rewrite fr_hc. Qed.
    Lemma fr_vish p u : vish s' p u = vish s p u.
    Proof. unfold vish. by rewrite fr_hh. Qed.
    Lemma fr_kk' u : kk (th s' u) = kk (th s u).
    Proof. destruct (decide (u = t)) as [-> |]; [apply Hf | by rewrite (fr_th Hf)]. Qed.
    Lemma fr_fl' u : fl (th s' u) = fl (th s u).
    Proof. destruct (decide (u = t)) as [-> |]; [apply Hf | by rewrite (fr_th Hf)]. Qed.
    Lemma fr_ofl' u : ofl (th s' u) = ofl (th s u).
    Proof. destruct (decide (u = t)) as [-> |]; [apply Hf | by rewrite (fr_th Hf)]. Qed.
    Lemma fr_res' u : res (th s' u) = res (th s u).
    Proof. destruct (decide (u = t)) as [-> |]; [apply Hf | by rewrite (fr_th Hf)]. Qed.
    Lemma fr_par u : par (th s' u) = par (th s u).
    Proof. unfold par. by rewrite fr_ofl'. Qed.
    Lemma fr_tookat u k x i : tookat s' u k x i ↔ tookat s u k x i.
    Proof. unfold tookat. by rewrite fr_hx. Qed.
    Lemma fr_eff u k : eff s' u k ↔ eff s u k.
    Proof. unfold eff. by setoid_rewrite fr_tookat. Qed.
    Lemma fr_durable u k : durable s u k → durable s' u k.
    Proof.
      intros (x & i & Hx & Ht & Hi). exists x, i. rewrite fr_tookat. split_and!; [done | done |].
      pose proof (fr_mk Hf (LX x)). lia.
    Qed.
    Lemma fr_mk_len L n : n = length (hc s L) → mk s L = n → mk s' L = n.
    Proof.
      intros Hn Hmk. pose proof (fr_mk Hf L). destruct (fr_wf Hf) as (_ & Hle & _).
      specialize (Hle L). unfold mk in *. unfold hc, ids in Hn. rewrite !fmap_length in Hn.
      unfold line_hist in Hle, Hn. rewrite (fr_lines Hf) in Hle.
      lia.
    Qed.
    Lemma fr_lastm u P : lastm s u P → lastm s' u P.
    Proof. unfold lastm. by rewrite fr_hm, fr_kk'. Qed.
    Lemma fr_mdur u : mdur s u → mdur s' u.
    Proof.
      intros [Hmk Hl]. split; [| by apply fr_lastm]. rewrite fr_hm.
      apply (fr_mk_len (LMl u)); [| done]. unfold hm in *. by rewrite fmap_length.
    Qed.
    Lemma pwok_other u : u ≠ t → pwok s s' u.
    Proof. intros Hu pw Hin Hpw. left. apply (fr_pwbs Hf); [congruence | done]. Qed.
    Lemma fr_mk_le L : mk s' L ≤ length (hc s L).
    Proof.
      destruct (fr_wf Hf) as (_ & Hle & _). specialize (Hle L). unfold mk, hc, ids. rewrite !fmap_length.
      unfold line_hist in Hle |- *. by rewrite (fr_lines Hf) in Hle.
    Qed.
    Lemma fr_mpend u : pwok s s' u → mpend s u → mpend s' u.
    Proof.
      unfold mpend. rewrite fr_hm. intros Hu [Hin | Hmk].
      - destruct (Hu _ Hin eq_refl) as [? | Hle]; [by left | right]. simpl in Hle.
        pose proof (fr_mk_le (LMl u)). unfold hm in *. rewrite fmap_length in *. lia.
      - right. apply (fr_mk_len (LMl u)); [| done]. unfold hm. by rewrite fmap_length.
    Qed.
    Lemma fr_lcov w y i : pwok s s' w → lcov s w y i → lcov s' w y i.
    Proof.
      unfold lcov. intros Hw [(n & Hin & Hi) | Hi].
      - destruct (Hw _ Hin eq_refl) as [? | Hle]; [left; by exists n | right]. simpl in Hle. lia.
      - right. pose proof (fr_mk Hf (LX y)). lia.
    Qed.
    Lemma fr_hcov w p u tc : incr (hh s p u) → pwok s s' w → hcov s w p u tc → hcov s' w p u tc.
    Proof.
      unfold hcov. rewrite fr_hh. intros Hinc Hw [(n & Hin & Hi) | Hi].
      - destruct (Hw _ Hin eq_refl) as [? | Hle]; [left; by exists n | right]. simpl in Hle.
        etrans; [exact Hi |]. by apply hval_take_mono.
      - right. etrans; [exact Hi |]. apply hval_take_mono; [done | apply Hf].
    Qed.
    Lemma fr_hmk p u : incr (hh s p u) → hmk s p u ≤ hmk s' p u.
    Proof. intros Hinc. unfold hmk. rewrite fr_hh. apply hval_take_mono; [done | apply Hf]. Qed.

    Context (Hi : inv s).

    Lemma fr_locok x i w : x < NL → hx s x !! i = Some w → locok s' x i w.
    Proof.
      intros Hx Hw. destruct (i_loc _ _ _ Hi x i w Hx Hw) as [Hc | (p & u & k & Hla & Hlg & Hu & Hk & Hnext & Hcur & Hold)];
        [by left |].
      right. exists p, u, k. rewrite fr_kk', fr_hx. split_and!; try done.
      - intros Hkk. rewrite fr_par. destruct (decide (u = t)) as [-> | Hne]; [| rewrite (fr_th Hf) by done; auto].
        destruct (fr_ax Hf) as [[-> ->] | Hne]; [auto |].
        exfalso. apply Hne. exists x, i. split; [done |]. exists w. by subst k.
      - intros Hlt. specialize (Hold Hlt). pose proof (fr_mk Hf (LX x)). lia.
    Qed.

    Lemma fr_mmtok u i w : mmtok s u i w → mmtok s' u i w.
    Proof.
      unfold mmtok. rewrite fr_kk', fr_fl', fr_ofl', fr_par, fr_hm.
      intros [(? & ? & ? & Hok & Hf') | ?]; [left | by right]. split_and!; try done.
      - intros Hm. destruct (Hok Hm). split; [done |]. by apply fr_durable.
      - intros Hm. rewrite fr_eff. by apply Hf'.
    Qed.

    Lemma fr_helpok p u : helpok s p u → helpok s' p u.
    Proof.
      unfold helpok. rewrite fr_hh, fr_kk', fr_fl', fr_ofl', fr_par. intros [Hinc Hw]. split; [done |].
      intros w Hin. destruct (Hw w Hin) as (k & Hk & (x & j & a & Hx & Ha & Hla & Hlg & Hj) & Hb).
      exists k. split_and!; try done. exists x, j, a. rewrite fr_hx. split_and!; try done.
      pose proof (fr_mk Hf (LX x)). lia.
    Qed.

    Lemma fr_hi p u k tc : hi s p u k tc → hi s' p u k tc.
    Proof. unfold hi. by rewrite fr_kk', fr_fl', fr_ofl', fr_par. Qed.

    Lemma fr_lhok w y h : pwok s s' w → lhok s w y h → lhok s' w y h.
    Proof.
      intros Hw [Hy Hh]. split; [done |]. destruct (held h) as [a |] eqn:Eh; [| done].
      destruct Hh as (i & p & u & k & Ha & Hla & Hlg & Haba & Hst). exists i, p, u, k.
      rewrite fr_hx. split_and!; try done.
      pose proof (fr_clock Hf) as Hc.
      assert (incr (hh s p u)) as Hinc by (destruct (i_help _ _ _ Hi p u) as [? _]; [| done];
        destruct (i_loc _ _ _ Hi y i a Hy Ha) as [[Hn _] | (p' & u' & k' & Hla' & _ & Hu & _)];
        [congruence | rewrite Hla in Hla'; by injection Hla' as -> ->]).
      destruct h; simpl in *; rewrite ?fr_kk', ?fr_ofl'; try done.
      - destruct Hst as (? & ?). split; [lia | done].
      - destruct Hst as (? & ? & ?). split_and!; [lia | done | by apply fr_hi].
      - destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | by apply fr_hi | done | by apply fr_lcov].
      - destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | by apply fr_hi | | by apply fr_hcov].
        pose proof (fr_mk Hf (LX y)). lia.
    Qed.

    Lemma fr_nokm u : nokm s u → nokm s' u.
    Proof. unfold nokm. by rewrite fr_hm, fr_kk'. Qed.
    Lemma fr_idleok u : own (th s' u) = own (th s u) → idleok s u → idleok s' u.
    Proof.
      intros Hag (Hne & Hn & Ho). split_and!; [rewrite fr_eff, fr_kk'; done | by apply fr_nokm |].
      by rewrite Hag, fr_ofl'.
    Qed.
    Lemma fr_pre26 u p town : own (th s' u) = own (th s u) → ax (th s' u) = ax (th s u) →
      pre26 s u p town → pre26 s' u p town.
    Proof.
      intros Hag Hax' (Hp & Ht & Hid & Hax). split_and!; [by rewrite fr_par | by rewrite fr_ofl' | by apply fr_idleok |].
      by rewrite Hax'.
    Qed.
    Lemma fr_failok u : own (th s' u) = own (th s u) → ax (th s' u) = ax (th s u) → failok s u → failok s' u.
    Proof.
      intros Hag Hax' (Hne & Hl & Ho & Hax). split_and!; [rewrite fr_eff, fr_kk'; done | by apply fr_lastm | |].
      - by rewrite Hag, fr_ofl'.
      - by rewrite Hax'.
    Qed.
    Lemma fr_lhpre u c y : own (th s' u) = own (th s u) → ax (th s' u) = ax (th s u) → lhpre N NL s u c y → lhpre N NL s' u c y.
    Proof.
      intros Hag Hax'. destruct c; simpl.
      - intros [? ?]. split; [by apply fr_pre26 | by rewrite Hax'].
      - intros [? ?]. split; [by apply fr_failok | by rewrite Hax'].
      - by apply fr_idleok.
    Qed.
    Lemma fr_tookat_mk u k x : (∃ i, tookat s u k x i ∧ i < mk s (LX x)) → (∃ i, tookat s' u k x i ∧ i < mk s' (LX x)).
    Proof.
      intros (i & Ht & Hi'). exists i. rewrite fr_tookat. split; [done |].
      pose proof (fr_mk Hf (LX x)). lia.
    Qed.

    Lemma fr_pcok u : th s' u = th s u → pwok s s' u → pcok s u → pcok s' u.
    Proof.
      intros Hth Hu. unfold pcok. rewrite Hth.
      assert (own (th s' u) = own (th s u)) as Ho' by by rewrite Hth.
      assert (ax (th s' u) = ax (th s u)) as Ha' by by rewrite Hth.
      destruct (pc (th s u)) as [| p town | c y h | p town | | p town | p town | p ts | p ts | [|] | | p town | y v];
        intros Hp; [| | | | | | | | | | | | | destruct Hp; split; [by apply fr_idleok | done]].
      - by apply fr_idleok.
      - by apply fr_pre26.
      - destruct Hp as (? & ?). split; [by apply fr_lhpre | by apply fr_lhok].
      - by apply fr_pre26.
      - by apply fr_failok.
      - destruct Hp as (Hp & Ht & (i & Hti) & Hn & Ho & Hax).
        split_and!; try done; [exists i; by rewrite fr_tookat | by apply fr_nokm].
      - destruct Hp as (Hp & Ht & Hti & Hn & Ho & Hax).
        split_and!; try done; [by apply fr_tookat_mk | by apply fr_nokm].
      - destruct Hp as (Hp & Hti & Hl & Hmp & Ho & Hax).
        split_and!; try done; [by apply fr_tookat_mk | by apply fr_lastm | by apply fr_mpend].
      - destruct Hp as (Hp & Hti & Hl & Hmp & Ho & Hax).
        split_and!; try done; [by apply fr_tookat_mk | by apply fr_lastm | by apply fr_mpend].
      - destruct Hp as ((i & Hti & Hlen & Hcov) & Hmd & Hl & Hax). split_and!; try done.
        + exists i. rewrite fr_tookat, fr_hx. split_and!; [done | done | by apply fr_lcov].
        + by apply fr_mdur.
        + by apply fr_lastm.
      - by apply fr_failok.
      - done.
      - destruct Hp as (Hp & Ht & Hn & Ho & Hax & Hh). split_and!; try done.
        + by apply fr_nokm.
        + intros i Hti. rewrite fr_tookat in Hti. rewrite fr_vish. by apply (Hh i).
    Qed.
End fr.

Section frame_inv.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation inv := (inv N NL).
  Notation lastm := (lastm N NL).
  Notation pcok := (pcok N NL).

  (** A frame step keeps the invariant, given OWN, the visibility of the
      thread's annotated words and the thread's own program counter. *)
  Notation frame := (frame NL).
  Lemma inv_frame s s' t : inv s → frame s s' t → tr t →
    (own (th s' t) = ofl (th s' t) ∨ lastm s' t (λ w, mfail w = false ∧ own (th s' t) = (mpar w, mts w))) →
    (∀ x w p, x < NL → last (hx s x) = Some w → la w = Some (p, t) → annphase (pc (th s' t))) →
    pcok s' t → inv s'.
  Proof.
    intros Hi Hf Ht Hown Hvis Hpc. pose proof (fr_clock Hf) as Hc. split.
    - apply Hf.
    - unfold nl_ok. rewrite (fr_lines Hf). apply Hi.
    - intros L n. rewrite (fr_ids Hf), (fr_wt Hf). apply Hi.
    - intros u Hu. rewrite (fr_fl' Hf), (fr_ofl' Hf), (fr_res' Hf), (fr_kk' Hf).
      destruct (i_clock _ _ _ Hi u Hu) as (? & ? & ?). split_and!; [lia | lia | done].
    - intros u w Hu. rewrite (fr_hm Hf). intros Hw. pose proof (i_mclock _ _ _ Hi u w Hu Hw). lia.
    - intros p u w Hu. rewrite (fr_hh Hf). intros Hw. pose proof (i_hclock _ _ _ Hi p u w Hu Hw). lia.
    - intros x i w Hx. rewrite (fr_hx Hf). intros Hw. by eapply fr_locok.
    - intros u k x i x' i' Hx Hx'. rewrite !(fr_tookat Hf). by apply (i_once _ _ _ Hi).
    - intros u k Hu. rewrite (fr_kk' Hf), (fr_res' Hf), (fr_eff Hf). by apply (i_res _ _ _ Hi).
    - intros u i w Hu. rewrite (fr_hm Hf). intros Hw. eapply fr_mmtok; [done |]. by apply (i_mmt _ _ _ Hi).
    - intros u Hu. destruct (decide (u = t)) as [-> | Hne]; [done |].
      rewrite (fr_th Hf u Hne). destruct (i_own _ _ _ Hi u Hu) as [? | ?]; [by left | right].
      by eapply fr_lastm.
    - intros p u Hu. eapply fr_helpok; [done |]. by apply (i_help _ _ _ Hi).
    - intros u x i Hu Hx. rewrite (fr_kk' Hf), (fr_tookat Hf), (fr_hx Hf). intros Ht' Hlen.
      destruct (i_cl _ _ _ Hi u x i Hu Hx Ht' Hlen) as [Hm | Hh]; [left; by eapply fr_mdur | right].
      rewrite (fr_ofl' Hf), (fr_par Hf). eapply Nat.lt_le_trans; [exact Hh |].
      apply (fr_hmk Hf). by destruct (i_help _ _ _ Hi (par (th s u)) u Hu).
    - intros x w p u Hx. rewrite (fr_hx Hf). intros Hl Hla.
      destruct (i_vis _ _ _ Hi x w p u Hx Hl Hla) as [Hg Hph]. rewrite (fr_kk' Hf). split; [done |].
      destruct (decide (u = t)) as [-> | Hne]; [by eapply Hvis | by rewrite (fr_th Hf u Hne)].
    - intros u Hu. destruct (decide (u = t)) as [-> | Hne]; [done |]. eapply fr_pcok; [done | done | | |].
      + by apply (fr_th Hf).
      + by apply (pwok_other Hf).
      + by apply (i_pc _ _ _ Hi).
  Qed.

  (** The frames of the steps. *)
  Lemma frame_setth s t T : p_wf (pm s) → kk T = kk (th s t) → fl T = fl (th s t) → ofl T = ofl (th s t) →
    res T = res (th s t) → (ax T = ax (th s t) ∧ an T = an (th s t)) ∨ ¬ eff NL s t (kk (th s t)) →
    frame s (setth s t T) t.
  Proof.
    intros Hwf Hk Hfl Ho Hr Hax. split; try done.
    1: intros u Hu; rewrite th_setth; by rewrite decide_False.
    all: rewrite th_setth, decide_True; done.
  Qed.
End frame_inv.

(** ** Helpers for the steps *)
Section helpers.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).

  Lemma visx_last s x w : last (hx s x) = Some w → visx s x = w.
  Proof. unfold visx. by intros ->. Qed.
  Lemma visx_ann s x p u : la (visx s x) = Some (p, u) → last (hx s x) = Some (visx s x).
  Proof. unfold visx. destruct (last (hx s x)); simpl; [done | discriminate]. Qed.
  Lemma visx_ann' s x : la (visx s x) ≠ None → last (hx s x) = Some (visx s x).
  Proof. unfold visx. destruct (last (hx s x)); simpl; [done | by intros []]. Qed.
  Lemma last_lookup_len {A} (l : list A) w : last l = Some w → l !! pred (length l) = Some w ∧ length l ≠ 0.
  Proof. rewrite last_lookup. intros H. split; [done |]. destruct l; [discriminate | simpl; lia]. Qed.
  Lemma vism_last s u : 0 < mts (vism s u) → last (hm s u) = Some (vism s u).
  Proof. unfold vism. destruct (last (hm s u)); simpl; [done | lia]. Qed.

  (** The visible annotated word of thread [u]: its current invocation's. *)
  Lemma vis_own_ann s x w p u : inv s → x < NL → last (hx s x) = Some w → la w = Some (p, u) →
    tr u ∧ lg w = Some (u, kk (th s u)) ∧ annphase (pc (th s u)) ∧ x = ax (th s u) ∧ lv w = an (th s u) ∧
    p = par (th s u) ∧ tookat s u (kk (th s u)) x (pred (length (hx s x))).
  Proof.
    intros Hi Hx Hl Hla. destruct (i_vis _ _ _ Hi x w p u Hx Hl Hla) as [Hg Hph].
    apply last_lookup_len in Hl as [Hl Hlen].
    destruct (i_loc _ _ _ Hi x _ w Hx Hl) as [[Hn _] | (p' & u' & k & Hla' & Hlg & Hu & _ & _ & Hcur & _)];
      [congruence |].
    rewrite Hla in Hla'. injection Hla' as <- <-. rewrite Hg in Hlg. injection Hlg as <-.
    destruct (Hcur eq_refl) as (? & ? & ?). split_and!; try done. by exists w.
  Qed.

  (** A word that names invocation [k] of [u]. *)
  Lemma tookat_locok s u k x i : inv s → x < NL → tookat s u k x i →
    ∃ w p, hx s x !! i = Some w ∧ la w = Some (p, u) ∧ lg w = Some (u, k) ∧ tr u ∧ k ≤ kk (th s u) ∧
      (k = kk (th s u) → x = ax (th s u) ∧ lv w = an (th s u) ∧ p = par (th s u)) ∧
      (k < kk (th s u) → S i < mk s (LX x)) ∧
      (∀ w', hx s x !! S i = Some w' → la w' = None ∧ lv w' = lv w).
  Proof.
    intros Hi Hx (w & Hw & Hg). destruct (i_loc _ _ _ Hi x i w Hx Hw) as [[_ Hn] | (p & u' & k' & Hla & Hlg & Hu & Hk & Hnext & Hcur & Hold)];
      [congruence |].
    rewrite Hg in Hlg. injection Hlg as <- <-. exists w, p. split_and!; done.
  Qed.

  Lemma tookat_cur_ax s u x i : inv s → x < NL → tookat s u (kk (th s u)) x i → x = ax (th s u).
  Proof. intros Hi Hx Ht. destruct (tookat_locok s u _ x i Hi Hx Ht) as (w & p & _ & _ & _ & _ & _ & Hc & _). by destruct Hc. Qed.

  (** A memento not newer than the floor: no write of the current
      invocation, and OWN is the committed [own_floor]. *)
  Lemma stale_mmt s t : inv s → tr t → mts (vism s t) ≤ fl (th s t) → nokm s t ∧ own (th s t) = ofl (th s t).
  Proof.
    intros Hi Ht Hle. split.
    - intros w Hw Hg. apply elem_of_list_lookup_1 in Hw as [i Hw].
      destruct (i_mmt _ _ _ Hi t i w Ht Hw) as [(_ & Hlt & Hlast & _) | (Hk & _ & _)]; [| specialize (Hk _ Hg); lia].
      assert (last (hm s t) = Some w) as Hl.
      { rewrite last_lookup. by rewrite <- Hlast. }
      unfold vism in Hle. rewrite Hl in Hle. simpl in Hle. lia.
    - destruct (i_own _ _ _ Hi t Ht) as [? | (w & Hl & Hg & _)]; [done | exfalso].
      apply last_lookup_len in Hl as [Hw _].
      destruct (i_mmt _ _ _ Hi t _ w Ht Hw) as [(_ & Hlt & _) | (Hk & _ & _)]; [| specialize (Hk _ Hg); lia].
      unfold vism in Hle. rewrite last_lookup, Hw in Hle. simpl in Hle. lia.
  Qed.

  (** A memento newer than the floor: the current invocation's, and the last. *)
  Lemma cur_mmt s t : inv s → tr t → fl (th s t) < mts (vism s t) →
    last (hm s t) = Some (vism s t) ∧ mg (vism s t) = Some (kk (th s t)) ∧
    (mfail (vism s t) = false → mpar (vism s t) = par (th s t) ∧ durable s t (kk (th s t))) ∧
    (mfail (vism s t) = true → ¬ eff s t (kk (th s t))).
  Proof.
    intros Hi Ht Hlt. assert (last (hm s t) = Some (vism s t)) as Hl by (apply vism_last; lia).
    destruct (last_lookup_len _ _ Hl) as [Hw _].
    destruct (i_mmt _ _ _ Hi t _ _ Ht Hw) as [(? & _ & _ & ? & ?) | (_ & Hle & _)]; [done | lia].
  Qed.

  Lemma lhok_enter s w y : inv s → y < NL → la (visx s y) ≠ None → lhok s w y (H4 (visx s y)).
  Proof.
    intros Hi Hy Hla. split; [done |]. simpl. apply visx_ann' in Hla as Hl.
    destruct (last_lookup_len _ _ Hl) as [Hw _].
    destruct (la (visx s y)) as [[p u] |] eqn:E; [| done].
    destruct (i_loc _ _ _ Hi y _ _ Hy Hw) as [[Hn _] | (p' & u' & k & Hla' & Hlg & _)]; [congruence |].
    exists (pred (length (hx s y))), p', u', k. split_and!; try done.
    all: try (intros b Hb _; rewrite Hl in Hb; by injection Hb).
    all: rewrite <- E; apply Hla'.
  Qed.

  (** The frames of the memory's own changes. *)
  Lemma frame_pfence s t : p_wf (pm s) → frame s (pfence s t) t.
  Proof.
    intros Hwf. split; try done.
    - unfold pfence, p_fence. cbn [pm p_mem]. by rewrite foldr_fence_lines.
    - intros L. apply mk_pfence.
    - by apply p_fence_wf.
    - intros pw Hpw Hin. rewrite pwbs_pfence. by apply elem_of_list_filter.
    - by left.
  Qed.
  Lemma frame_ppwb s t L : p_wf (pm s) → frame s (ppwb s t L) t.
  Proof.
    intros Hwf. split; try done.
    - by apply p_pwb_wf.
    - intros pw Hpw Hin. rewrite pwbs_ppwb. by right.
    - by left.
  Qed.
  Lemma frame_tick s t : p_wf (pm s) → frame s (tick s) t.
  Proof. intros Hwf. split; try done; [simpl; lia | by left]. Qed.
  Lemma frame_drop s t : p_wf (pm s) → frame s (drop_pwbs s t) t.
  Proof.
    intros (Hl & Hm & Hf). split; try done.
    - split_and!; [done | done |]. simpl. apply Forall_forall. intros pw Hpw.
      apply elem_of_list_filter in Hpw as [_ Hpw]. rewrite Forall_forall in Hf. by apply Hf.
    - intros pw Hpw Hin. unfold pwbs, drop_pwbs; simpl. by apply elem_of_list_filter.
    - by left.
  Qed.
  Lemma frame_trans s1 s2 s3 t : frame s1 s2 t → frame s2 s3 t → frame s1 s3 t.
  Proof.
    intros H1 H2. split.
    - by rewrite (fr_lines H2), (fr_lines H1).
    - by rewrite (fr_wt H2), (fr_wt H1).
    - intros L. etrans; [apply (fr_mk H1) | apply (fr_mk H2)].
    - apply (fr_wf H2).
    - intros pw Hpw Hin. apply (fr_pwbs H2); [done |]. by apply (fr_pwbs H1).
    - etrans; [apply (fr_clock H1) | apply (fr_clock H2)].
    - intros u Hu. by rewrite (fr_th H2), (fr_th H1).
    - by rewrite (fr_kk H2), (fr_kk H1).
    - by rewrite (fr_fl H2), (fr_fl H1).
    - by rewrite (fr_ofl H2), (fr_ofl H1).
    - by rewrite (fr_res H2), (fr_res H1).
    - destruct (fr_ax H1) as [[A1 B1] | E1]; [| by right].
      destruct (fr_ax H2) as [[A2 B2] | E2]; [left; by rewrite A2, B2 | right].
      rewrite (fr_eff H1), (fr_kk H1) in E2. done.
  Qed.
End helpers.

Section local_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).

  Ltac pcok_new := unfold pcok; cbn zeta; rewrite th_setth, decide_True by done; cbn [pc with_pc with_own].

  Lemma no_vis_ann s t x w p : inv s → x < NL → last (hx s x) = Some w → la w = Some (p, t) →
    ¬ annphase (pc (th s t)) → False.
  Proof. intros Hi Hx Hl Hla Hn. destruct (i_vis _ _ _ Hi x w p t Hx Hl Hla). done. Qed.

  Lemma frame_local s s1 t T' : frame s s1 t → th s1 t = th s t →
    kk T' = kk (th s t) → fl T' = fl (th s t) → ofl T' = ofl (th s t) → res T' = res (th s t) →
    (ax T' = ax (th s t) ∧ an T' = an (th s t)) ∨ ¬ eff s t (kk (th s t)) →
    frame s (setth s1 t T') t.
  Proof.
    intros Hf Hth Hk Hfl Ho Hr Hax. eapply frame_trans; [exact Hf |].
    apply frame_setth; rewrite ?Hth; try done; [apply Hf |].
    destruct Hax as [? | Hne]; [by left | right]. by rewrite (fr_eff Hf).
  Qed.

  (** The steps that write nothing: the invariant from the thread's OWN,
      visibility and program counter. *)
  Lemma inv_local s s1 t T' : inv s → tr t → frame s s1 t → th s1 t = th s t →
    kk T' = kk (th s t) → fl T' = fl (th s t) → ofl T' = ofl (th s t) → res T' = res (th s t) →
    (ax T' = ax (th s t) ∧ an T' = an (th s t)) ∨ ¬ eff s t (kk (th s t)) →
    (own T' = ofl T' ∨ lastm s1 t (λ w, mfail w = false ∧ own T' = (mpar w, mts w))) →
    (∀ x w p, x < NL → last (hx s x) = Some w → la w = Some (p, t) → annphase (pc T')) →
    pcok (setth s1 t T') t → inv (setth s1 t T').
  Proof.
    intros Hi Ht Hf Hth Hk Hfl Ho Hr Hax Hown Hvis Hpc.
    assert (Hf' : frame s (setth s1 t T') t) by (by apply frame_local).
    eapply inv_frame; [done | exact Hf' | done | | | done]; rewrite th_setth, decide_True by done; [| done].
    destruct Hown as [? | (w & Hl & Hg & Hw)]; [by left | right]. exists w.
    rewrite th_setth, decide_True, Hk, <- Hth by done. naive_solver.
  Qed.

  Lemma lhok_enter_fr s s' t w y : inv s → frame s s' t → y < NL → la (visx s y) ≠ None →
    lhok s' w y (H4 (visx s y)).
  Proof.
    intros Hi Hf Hy Hla. destruct (lhok_enter N NL s w y Hi Hy Hla) as [_ (i & p & u & k & Ha & Hla' & Hlg & Hab & _)].
    split; [done |]. exists i, p, u, k. by rewrite (fr_hx Hf).
  Qed.

  Lemma pcok_lhret s s' t c y v : inv s → frame s s' t → lhpre N NL s t c y → y < NL →
    own (th s' t) = own (th s t) → ax (th s' t) = ax (th s t) →
    pc (th s' t) = lh_ret (th s' t) c y v → pcok s' t.
  Proof.
    intros Hi Hf Hpre Hy Ho Ha Hpc. unfold pcok. rewrite Hpc. destruct c as [p town | |]; simpl in *.
    - destruct Hpre. destruct (decide (v = ao (th s' t))); by apply (fr_pre26 Hf).
    - destruct Hpre. by apply (fr_failok Hf).
    - split; [by apply (fr_idleok Hf) | done].
  Qed.

  Lemma pcok_lhenter s s' t c y : inv s → frame s s' t → lhpre N NL s t c y → y < NL →
    own (th s' t) = own (th s t) → ax (th s' t) = ax (th s t) →
    pc (th s' t) = lh_enter (th s' t) c y (visx s y) → pcok s' t.
  Proof.
    intros Hi Hf Hpre Hy Ho Ha Hpc. unfold lh_enter in Hpc. destruct (la (visx s y)) as [[p u] |] eqn:E.
    - unfold pcok. rewrite Hpc. split; [by apply (fr_lhpre Hf) |]. apply (lhok_enter_fr s s' t); try done. by rewrite E.
    - by eapply pcok_lhret.
  Qed.

  Lemma pcok_lh s s' t c y h h' : inv s → frame s s' t → pc (th s t) = PLH c y h → pcok s t →
    own (th s' t) = own (th s t) → ax (th s' t) = ax (th s t) →
    pc (th s' t) = PLH c y h' → lhok s' t y h' → pcok s' t.
  Proof.
    intros Hi Hf Hpc Hp Ho Ha Hpc' Hl. unfold pcok in Hp |- *. rewrite Hpc in Hp. rewrite Hpc'.
    destruct Hp as [Hpre _]. split; [by apply (fr_lhpre Hf) | done].
  Qed.

  Lemma step_start s t x o n : inv s → tr t → pc (th s t) = PIdle → x < NL →
    let T := th s t in
    inv (setth s t (TS (P26 (negb (own T).1) (own T).2) (kk T) x o n (fl T) (ofl T) (own T) (res T))).
  Proof.
    intros Hi Ht Hpc Hx T. pose proof (i_pc _ _ _ Hi t Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hne & Hn & Ho).
    assert (Hf : frame s (setth s t (TS (P26 (negb (own T).1) (own T).2) (kk T) x o n (fl T) (ofl T) (own T) (res T))) t).
    { apply frame_setth; [apply Hi | done | done | done | done | by right]. }
    eapply inv_frame; [done | exact Hf | done | | |].
    - left. rewrite th_setth, decide_True by done. exact Ho.
    - intros x' w p Hx' Hl Hla. exfalso. eapply no_vis_ann; [done | exact Hx' | exact Hl | exact Hla |]. rewrite Hpc. by intros [].
    - pcok_new. unfold pre26. rewrite th_setth, decide_True by done. cbn [own ofl kk ax].
      split_and!; try done.
      + unfold par. cbn [ofl]. subst T. by rewrite Ho.
      + subst T. by rewrite Ho.
      + unfold idleok. rewrite th_setth, decide_True by done. cbn [own ofl kk ax]. split_and!; try done.
        unfold nokm. rewrite th_setth, decide_True by done. done.
  Qed.

  Lemma frame_refl s t : p_wf (pm s) → frame s s t.
  Proof. intros Hwf. split; try done. by left. Qed.

  Lemma vis_mono s t T' : inv s → (annphase (pc (th s t)) → annphase (pc T')) →
    ∀ x w p, x < NL → last (hx s x) = Some w → la w = Some (p, t) → annphase (pc T').
  Proof. intros Hi Himp x w p Hx Hl Hla. apply Himp. by destruct (i_vis _ _ _ Hi x w p t Hx Hl Hla). Qed.

  Lemma pcok_at s t : inv s → tr t → pcok s t.
  Proof. intros Hi Ht. by apply (i_pc _ _ _ Hi). Qed.

  Ltac th_new := rewrite ?th_setth, ?decide_True by done.

  Lemma step_startrec s t x o n : inv s → tr t → pc (th s t) = PIdle → x < NL →
    let T := th s t in
    inv (setth s t (TS PRec (kk T) x o n (fl T) (ofl T) (own T) (res T))).
  Proof.
    intros Hi Ht Hpc Hx T. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hne & Hn & Ho).
    eapply inv_local; [done | done | apply frame_refl, Hi | done | done | done | done | done | by right | | |].
    - by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - unfold pcok. th_new. done.
  Qed.

  Lemma step_load s t y : inv s → tr t → pc (th s t) = PIdle → y < NL →
    inv (setth s t (with_pc (th s t) (lh_enter (th s t) KLoad y (visx s y)))).
  Proof.
    intros Hi Ht Hpc Hy. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    pose proof (frame_refl s t (i_wf _ _ _ Hi)) as Hf0.
    eapply inv_local; [done | done | exact Hf0 | done | done | done | done | done | by left | | |].
    - left. by destruct Hp as (_ & _ & ?).
    - apply vis_mono; [done |]. by rewrite Hpc.
    - eapply (pcok_lhenter s _ t KLoad y); [done | | exact Hp | done | by th_new | by th_new | by th_new].
      apply frame_local; try done; by left.
  Qed.

  Lemma step_loadret s t y v : inv s → tr t → pc (th s t) = PLoad y v →
    inv (setth s t (with_pc (th s t) PIdle)).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [(Hne & Hn & Ho) _].
    eapply inv_local; [done | done | apply frame_refl, Hi | done | done | done | done | done | by left | | |].
    - by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - unfold pcok. th_new. unfold idleok, nokm. th_new. done.
  Qed.

  (** LOADHELP's steps that change only its position. *)
  Lemma step_lh_ret s s1 t c y h v : inv s → tr t → frame s s1 t → th s1 t = th s t →
    pc (th s t) = PLH c y h →
    inv (setth s1 t (with_pc (th s t) (lh_ret (th s t) c y v))).
  Proof.
    intros Hi Ht Hf Hth Hpc. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre [Hy _]].
    assert (Hf' : frame s (setth s1 t (with_pc (th s t) (lh_ret (th s t) c y v))) t) by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - destruct c as [p town | |]; simpl in Hpre; [destruct Hpre as ((_ & _ & (_ & _ & ?) & _) & _) |
        destruct Hpre as ((_ & _ & ? & _) & _) | destruct Hpre as (_ & _ & ?)]; by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - eapply (pcok_lhret s _ t c y v); [done | exact Hf' | done | done | by th_new | by th_new | by th_new].
  Qed.

  Lemma step_lh_enter s s1 t c y h : inv s → tr t → frame s s1 t → th s1 t = th s t →
    pc (th s t) = PLH c y h →
    inv (setth s1 t (with_pc (th s t) (lh_enter (th s t) c y (visx s y)))).
  Proof.
    intros Hi Ht Hf Hth Hpc. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre [Hy _]].
    assert (Hf' : frame s (setth s1 t (with_pc (th s t) (lh_enter (th s t) c y (visx s y)))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - destruct c as [p town | |]; simpl in Hpre; [destruct Hpre as ((_ & _ & (_ & _ & ?) & _) & _) |
        destruct Hpre as ((_ & _ & ? & _) & _) | destruct Hpre as (_ & _ & ?)]; by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - eapply (pcok_lhenter s _ t c y); [done | exact Hf' | done | done | by th_new | by th_new | by th_new].
  Qed.

  Lemma step_lh_stage s s1 t c y h h' : inv s → tr t → frame s s1 t → th s1 t = th s t →
    pc (th s t) = PLH c y h → lhok (setth s1 t (with_pc (th s t) (PLH c y h'))) t y h' →
    inv (setth s1 t (with_pc (th s t) (PLH c y h'))).
  Proof.
    intros Hi Ht Hf Hth Hpc Hl. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre _].
    assert (Hf' : frame s (setth s1 t (with_pc (th s t) (PLH c y h'))) t) by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - destruct c as [p town | |]; simpl in Hpre; [destruct Hpre as ((_ & _ & (_ & _ & ?) & _) & _) |
        destruct Hpre as ((_ & _ & ? & _) & _) | destruct Hpre as (_ & _ & ?)]; by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - eapply (pcok_lh s _ t c y h h'); [done | exact Hf' | done | | by th_new | by th_new | by th_new | done].
      by apply pcok_at.
  Qed.
End local_steps.

Section more_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).
  Ltac th_new := rewrite ?th_setth, ?decide_True by done.

  Lemma pm_setth s t T : pm (setth s t T) = pm s.
  Proof. done. Qed.
  Lemma hm_ppwb s t L u : hm (ppwb s t L) u = hm s u.
  Proof. done. Qed.
  Lemma hh_ppwb s t L p u : hh (ppwb s t L) p u = hh s p u.
  Proof. done. Qed.
  Lemma hx_ppwb s t L x : hx (ppwb s t L) x = hx s x.
  Proof. done. Qed.
  Lemma ids_setth s t T L : ids (setth s t T) L = ids s L.
  Proof. done. Qed.
  Lemma pwbs_setth s t T : pwbs (setth s t T) = pwbs s.
  Proof. done. Qed.
  Lemma mk_setth s t T L : mk (setth s t T) L = mk s L.
  Proof. done. Qed.
  Lemma hx_setth s t T x : hx (setth s t T) x = hx s x.
  Proof. done. Qed.
  Lemma hm_setth s t T u : hm (setth s t T) u = hm s u.
  Proof. done. Qed.
  Lemma hh_setth s t T p u : hh (setth s t T) p u = hh s p u.
  Proof. done. Qed.

  Lemma par_with_pc T p : par (with_pc T p) = par T.
  Proof. done. Qed.
  Lemma par_with_own T o : par (with_own T o) = par T.
  Proof. done. Qed.

  Lemma held_tr s y i a p u : inv s → y < NL → hx s y !! i = Some a → la a = Some (p, u) → tr u.
  Proof.
    intros Hi Hy Ha Hla. destruct (i_loc _ _ _ Hi y i a Hy Ha) as [[? _] | (p' & u' & k & Hla' & _ & Hu & _)];
      [congruence |]. rewrite Hla in Hla'. by injection Hla' as -> ->.
  Qed.

  Lemma pcok_of s t : inv s → tr t → pcok s t.
  Proof. intros Hi Ht. by apply (i_pc _ _ _ Hi). Qed.

  Lemma step_h4 s t c y a : inv s → tr t → pc (th s t) = PLH c y (H4 a) →
    inv (setth (tick s) t (with_pc (th s t) (PLH c y (H5 a (clock s))))).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & Hlg & Hab & _)]].
    pose proof (frame_tick NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth (tick s) t (with_pc (th s t) (PLH c y (H5 a (clock s))))) t)
      by (apply frame_local; try done; by left).
    eapply step_lh_stage; [done | done | exact Hf | done | exact Hpc |].
    split; [done |]. exists i, p, u, k. rewrite (fr_hx Hf'). split_and!; try done.
    - simpl. lia.
    - rewrite (fr_kk' Hf'), (fr_ofl' Hf'). intros _. pose proof (held_tr s y i a p u Hi Hy Ha Hla) as Hu.
      destruct (i_clock _ _ _ Hi u Hu). lia.
  Qed.

  Lemma step_h5clean s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H5 a tc) →
    inv (setth s t (with_pc (th s t) (lh_ret (th s t) c y (lv (visx s y))))).
  Proof. intros Hi Ht Hpc. eapply step_lh_ret; [done | done | apply frame_refl, Hi | done | exact Hpc]. Qed.

  Lemma step_h5chg s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H5 a tc) → la (visx s y) ≠ None →
    inv (setth s t (with_pc (th s t) (PLH c y (H4 (visx s y))))).
  Proof.
    intros Hi Ht Hpc Hla. pose proof (pcok_of s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy _]]. pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    eapply step_lh_stage; [done | done | exact Hf | done | exact Hpc |].
    eapply (lhok_enter_fr N NL s _ t); try done. apply frame_local; try done; by left.
  Qed.

  Lemma step_h5same s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H5 a tc) → phys2 (visx s y) = phys2 a →
    inv (setth s t (with_pc (th s t) (PLH c y (H10 a tc)))).
  Proof.
    intros Hi Ht Hpc Hph. pose proof (pcok_of s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & Hlg & Hab & Htc & Hlow)]].
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf0.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (PLH c y (H10 a tc)))) t)
      by (apply frame_local; try done; by left).
    assert (la (visx s y) = Some (p, u)) as Hlv by (unfold phys2, phys in Hph; injection Hph; congruence).
    pose proof (visx_ann s y p u Hlv) as Hl. pose proof (Hab _ Hl Hph) as Heq.
    destruct (vis_own_ann N NL s y (visx s y) p u Hi Hy Hl Hlv) as (Hu & Hg & _).
    rewrite Heq in Hg. rewrite Hlg in Hg. injection Hg as ->.
    eapply step_lh_stage; [done | done | exact Hf0 | done | exact Hpc |].
    split; [done |]. exists i, p, u, (kk (th s u)). rewrite (fr_hx Hf'). rewrite (fr_kk' Hf'), (fr_ofl' Hf').
    split_and!; try done. left. by rewrite (fr_kk' Hf').
  Qed.

  Lemma step_h_to11 s s1 t c y h : inv s → tr t → frame s s1 t → th s1 t = th s t → pc (th s t) = PLH c y h →
    inv (setth s1 t (with_pc (th s t) (PLH c y H11))).
  Proof.
    intros Hi Ht Hf Hth Hpc. pose proof (pcok_of s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy _]]. eapply step_lh_stage; [done | done | exact Hf | done | exact Hpc |]. by split.
  Qed.

  Lemma step_h11 s t c y : inv s → tr t → pc (th s t) = PLH c y H11 →
    inv (setth s t (with_pc (th s t) (lh_enter (th s t) c y (visx s y)))).
  Proof. intros Hi Ht Hpc. eapply step_lh_enter; [done | done | apply frame_refl, Hi | done | exact Hpc]. Qed.

  Lemma step_h10go s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H10 a tc) →
    let thv := hval (hh s (match la a with Some (p, _) => p | None => false end)
                         (match la a with Some (_, u) => u | None => 0 end)) in
    thv < tc →
    inv (setth (ppwb s t (LX y)) t (with_pc (th s t) (PLH c y (if chelp fixed then H13 a tc thv else H18 a tc)))).
  Proof.
    intros Hi Ht Hpc thv Hlt. simpl. pose proof (pcok_of s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & Hlg & Hab & Htc & Hlow & Hhi)]].
    pose proof (frame_ppwb NL s t (LX y) (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth (ppwb s t (LX y)) t (with_pc (th s t) (PLH c y (H13 a tc thv)))) t)
      by (apply frame_local; try done; by left).
    eapply step_lh_stage; [done | done | exact Hf | done | exact Hpc |].
    split; [done |]. exists i, p, u, k. rewrite (fr_hx Hf'). rewrite (fr_kk' Hf'), (fr_ofl' Hf').
    split_and!; try done.
    all: try (by eapply (fr_hi Hf')).
    all: try (subst thv; by rewrite Hla in Hlt).
    left. exists (length (ids s (LX y))). split; [rewrite pwbs_setth, pwbs_ppwb; by left |].
      apply lookup_lt_Some in Ha. unfold hx, hc in Ha. rewrite !fmap_length in Ha. unfold LX in *. lia.
  Qed.

  Lemma step_h18fail s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H18 a tc) →
    inv (setth (pfence s t) t (with_pc (th s t) (lh_enter (th s t) c y (visx (pfence s t) y)))).
  Proof.
    intros Hi Ht Hpc. assert (visx (pfence s t) y = visx s y) as -> by (unfold visx; by rewrite hx_pfence).
    eapply step_lh_enter; [done | done | apply frame_pfence, Hi | done | exact Hpc].
  Qed.
End more_steps.

Section owner_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).
  Ltac th_new := rewrite ?th_setth, ?decide_True by done.

  Lemma not_annphase s t : inv s → ¬ annphase (pc (th s t)) →
    ∀ x w p, x < NL → last (hx s x) = Some w → la w = Some (p, t) → False.
  Proof. intros Hi Hn x w p Hx Hl Hla. apply Hn. by destruct (i_vis _ _ _ Hi x w p t Hx Hl Hla). Qed.

  Lemma step_26fail s t p town : inv s → tr t → pc (th s t) = P26 p town →
    inv (setth (pfence s t) t (with_pc (th s t)
           (lh_enter (th s t) (KL27 p town) (ax (th s t)) (visx (pfence s t) (ax (th s t)))))).
  Proof.
    intros Hi Ht Hpc. assert (visx (pfence s t) (ax (th s t)) = visx s (ax (th s t))) as ->
      by (unfold visx; by rewrite hx_pfence).
    pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    pose proof (frame_pfence NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth (pfence s t) t (with_pc (th s t)
           (lh_enter (th s t) (KL27 p town) (ax (th s t)) (visx s (ax (th s t)))))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - left. by destruct Hp as (_ & _ & (_ & _ & ?) & _).
    - intros. exfalso. eapply (not_annphase s t Hi); [| done..]. rewrite Hpc. by intros [].
    - eapply (pcok_lhenter N NL s _ t (KL27 p town)); [done | exact Hf' | | by destruct Hp as (_ & _ & _ & ?)
        | by th_new | by th_new | by th_new].
      by split.
  Qed.

  Lemma step_failf s t : inv s → tr t → pc (th s t) = PFailF →
    inv (setth (ppwb s t (LMl t)) t (with_pc (th s t) (PCommit false))).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    pose proof (frame_ppwb NL s t (LMl t) (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth (ppwb s t (LMl t)) t (with_pc (th s t) (PCommit false))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - left. by destruct Hp as (_ & _ & ? & _).
    - intros. exfalso. eapply (not_annphase s t Hi); [| done..]. rewrite Hpc. by intros [].
    - unfold pcok. th_new. cbn [pc with_pc]. apply (fr_failok Hf'); [by th_new | by th_new | done].
  Qed.

  Lemma step_33 s t p town : inv s → tr t → pc (th s t) = P33 p town →
    inv (setth (if c33 fixed then pfence (ppwb s t (LX (ax (th s t)))) t else s) t (with_pc (th s t) (P34 p town))).
  Proof.
    intros Hi Ht Hpc. cbn [c33 fixed]. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hp & Htown & (i & Hti) & Hn & Ho & Hax).
    pose proof (i_wf _ _ _ Hi) as Hwf.
    assert (Hf : frame s (pfence (ppwb s t (LX (ax (th s t)))) t) t)
      by (eapply frame_trans; [apply frame_ppwb, Hwf | apply frame_pfence, p_pwb_wf, Hwf]).
    assert (Hf' : frame s (setth (pfence (ppwb s t (LX (ax (th s t)))) t) t (with_pc (th s t) (P34 p town))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros. done.
    - unfold pcok. th_new. cbn [pc with_pc]. split_and!; try done.
      + exists i. split; [by rewrite (fr_tookat Hf') |].
        assert (length (ids s (LX (ax (th s t)))) ≤ mk (pfence (ppwb s t (LX (ax (th s t)))) t) (LX (ax (th s t))))
          as Hcov.
        { apply mk_pfence_covers; [apply p_pwb_wf, Hwf | rewrite pwbs_ppwb; by left |].
          cbn. rewrite (i_nl _ _ _ Hi). by apply LX_lt. }
        destruct Hti as (w & Hw & _). apply lookup_lt_Some in Hw. unfold hx, hc in Hw.
        rewrite !fmap_length in Hw. cbn [ax with_pc]. rewrite mk_setth. unfold LX in *. lia.
      + by apply (fr_nokm Hf').
  Qed.

  Lemma step_36 s t p ts : inv s → tr t → pc (th s t) = P36 p ts →
    inv (setth s t (with_own (with_pc (th s t) (P38 p ts)) (p, ts))).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hp & Hti & Hl & Hmp & Ho & Hax).
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_own (with_pc (th s t) (P38 p ts)) (p, ts))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - right. unfold lastm in Hl |- *. destruct Hl as (w & Hlw & Hg & Hf0 & Hmp' & Hts). exists w. cbn [own with_own]. subst. split_and!; try done. by rewrite Hmp'.
    - intros. done.
    - unfold pcok. th_new. cbn [pc with_pc with_own own ax]. split_and!; try done.
      all: try (by apply (fr_tookat_mk Hf')).
      all: try (by apply (fr_lastm Hf')).
  Qed.

  Lemma step_rec4 s t : inv s → tr t → pc (th s t) = PRec →
    fl (th s t) < mts (vism s t) → mfail (vism s t) = true →
    inv (setth s t (with_pc (th s t) (lh_enter (th s t) KL17 (ax (th s t)) (visx s (ax (th s t)))))).
  Proof.
    intros Hi Ht Hpc Hlt Hfail. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct (cur_mmt N NL s t Hi Ht Hlt) as (Hl & Hg & _ & Hne).
    specialize (Hne Hfail).
    assert (Hown : own (th s t) = ofl (th s t)).
    { destruct (i_own _ _ _ Hi t Ht) as [? | (w & Hlw & _ & Hw & _)]; [done |].
      rewrite Hl in Hlw. injection Hlw as <-. congruence. }
    assert (Hfo : failok s t) by (split_and!; try done; exists (vism s t); done).
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (lh_enter (th s t) KL17 (ax (th s t)) (visx s (ax (th s t)))))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros x w p Hx Hlw Hla. exfalso. apply Hne.
      destruct (vis_own_ann N NL s x w p t Hi Hx Hlw Hla) as (_ & _ & _ & _ & _ & _ & Hto). by exists x, (pred (length (hx s x))).
    - eapply (pcok_lhenter N NL s _ t KL17); [done | exact Hf' | by split | done | by th_new | by th_new | by th_new].
  Qed.

  Lemma step_rec5 s t : inv s → tr t → pc (th s t) = PRec →
    fl (th s t) < mts (vism s t) → mfail (vism s t) = false → mts (vism s t) < (own (th s t)).2 → False.
  Proof.
    intros Hi Ht Hpc Hlt Hf Hown. destruct (cur_mmt N NL s t Hi Ht Hlt) as (Hl & Hg & _).
    destruct (i_clock _ _ _ Hi t Ht) as (_ & Hofl & _).
    destruct (i_own _ _ _ Hi t Ht) as [Ho | (w & Hlw & _ & _ & Ho)]; [rewrite Ho in Hown; lia |].
    rewrite Hl in Hlw. injection Hlw as <-. rewrite Ho in Hown. simpl in Hown. lia.
  Qed.

  Lemma step_rec6 s t : inv s → tr t → pc (th s t) = PRec →
    let m := vism s t in
    fl (th s t) < mts m → mfail m = false → (own (th s t)).2 ≤ mts m →
    inv (if c20 fixed
         then setth (ppwb s t (LMl t)) t (with_own (with_pc (th s t) (P38 (mpar m) (mts m))) (mpar m, mts m))
         else setth s t (with_pc (th s t) (P38 (negb (own (th s t)).1) (mts m)))).
  Proof.
    intros Hi Ht Hpc m Hlt Hf Hle. cbn [c20 fixed]. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp.
    rewrite Hpc in Hp. destruct (cur_mmt N NL s t Hi Ht Hlt) as (Hl & Hg & Hok & _).
    destruct (Hok Hf) as (Hpar & (x & i & Hx & Hti & Hmk)).
    pose proof (tookat_cur_ax N NL s t x i Hi Hx Hti) as ->.
    pose proof (frame_ppwb NL s t (LMl t) (i_wf _ _ _ Hi)) as Hf0.
    assert (Hf' : frame s (setth (ppwb s t (LMl t)) t (with_own (with_pc (th s t) (P38 (mpar m) (mts m))) (mpar m, mts m))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf0 | done | done | done | done | done | by left | | |].
    - right. exists m. done.
    - intros. done.
    - unfold pcok. th_new. cbn [pc with_pc with_own own ax]. split_and!; try done.
      + apply (fr_tookat_mk Hf'). by exists i.
      + apply (fr_lastm Hf'). by exists m.
      + left. rewrite pwbs_setth, pwbs_ppwb. apply elem_of_cons; left. unfold hm, hc. by rewrite !fmap_length.
  Qed.

  Lemma step_rec7 s t : inv s → tr t → pc (th s t) = PRec →
    mts (vism s t) ≤ fl (th s t) →
    phys (visx s (ax (th s t))) = (an (th s t), Some (negb (own (th s t)).1, t)) →
    inv (setth s t (with_pc (th s t) (P33 (negb (own (th s t)).1) (own (th s t)).2))).
  Proof.
    intros Hi Ht Hpc Hle Hph. pose proof (pcok_of N NL s t Hi Ht) as Hax. unfold pcok in Hax. rewrite Hpc in Hax.
    destruct (stale_mmt N NL s t Hi Ht Hle) as [Hn Ho].
    assert (la (visx s (ax (th s t))) = Some (negb (own (th s t)).1, t)) as Hla by (unfold phys in Hph; congruence).
    pose proof (visx_ann s _ _ _ Hla) as Hl.
    destruct (vis_own_ann N NL s _ _ _ t Hi Hax Hl Hla) as (_ & _ & _ & _ & _ & _ & Hto).
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (P33 (negb (own (th s t)).1) (own (th s t)).2))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros. done.
    - unfold pcok. th_new. cbn [pc with_pc own ax ofl]. split_and!; try done.
      + unfold par. by rewrite Ho.
      + by rewrite Ho.
      + eexists. by rewrite (fr_tookat Hf').
      + by apply (fr_nokm Hf').
  Qed.

  Lemma step_rech s t : inv s → tr t → pc (th s t) = PRec →
    mts (vism s t) ≤ fl (th s t) →
    phys (visx s (ax (th s t))) ≠ (an (th s t), Some (negb (own (th s t)).1, t)) →
    inv (setth s t (with_pc (th s t) (PRecH (negb (own (th s t)).1) (own (th s t)).2))).
  Proof.
    intros Hi Ht Hpc Hle Hph. pose proof (pcok_of N NL s t Hi Ht) as Hax. unfold pcok in Hax. rewrite Hpc in Hax.
    destruct (stale_mmt N NL s t Hi Ht Hle) as [Hn Ho].
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (PRecH (negb (own (th s t)).1) (own (th s t)).2))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros x w p Hx Hlw Hla. exfalso.
      destruct (vis_own_ann N NL s x w p t Hi Hx Hlw Hla) as (_ & _ & _ & -> & Hlv & -> & _).
      apply Hph. rewrite (visx_last s _ w Hlw). unfold phys, par. rewrite Hlv, Hla, Ho. done.
    - unfold pcok. th_new. cbn [pc with_pc own ax ofl]. split_and!; try done.
      + unfold par. by rewrite Ho.
      + by rewrite Ho.
      + by apply (fr_nokm Hf').
      + intros i Hti. rewrite (fr_tookat Hf') in Hti. rewrite (fr_vish Hf'), par_with_pc.
        cbn [kk with_pc] in Hti. cbn [ofl with_pc].
        destruct (tookat_locok N NL s t _ _ i Hi Hax Hti) as (w & p & Hw & Hla & Hlg & _ & _ & Hcur & _ & _).
        destruct (Hcur eq_refl) as (_ & Hlv & Hp).
        destruct (decide (S i = length (hx s (ax (th s t))))) as [Hlast | Hnl].
        * exfalso. apply Hph. assert (last (hx s (ax (th s t))) = Some w) as Hlw.
          { rewrite last_lookup. by rewrite <- Hlast. }
          rewrite (visx_last s _ w Hlw). unfold phys, par in *. rewrite Hlv, Hla, Hp, Ho. done.
        * assert (S i < length (hx s (ax (th s t)))) as Hlt by (apply lookup_lt_Some in Hw; lia).
          destruct (i_cl _ _ _ Hi t _ i Ht Hax Hti Hlt) as [(_ & w' & Hlw' & Hg' & _) | Hh].
          -- exfalso. apply last_lookup_len in Hlw' as [Hw' _].
             destruct (i_mmt _ _ _ Hi t _ _ Ht Hw') as [(_ & Hfl & _) | (Hk & _)]; [| specialize (Hk _ Hg'); lia].
             unfold vism in Hle. rewrite last_lookup, Hw' in Hle. simpl in Hle. lia.
          -- eapply Nat.lt_le_trans; [exact Hh |]. unfold hmk, vish.
             apply hval_take_le. by destruct (i_help _ _ _ Hi (par (th s t)) t Ht).
  Qed.

  Lemma step_rec8 s t p town : inv s → tr t → pc (th s t) = PRecH p town → town < vish s p t →
    inv (setth s t (with_pc (th s t) (P34 p town))).
  Proof.
    intros Hi Ht Hpc Hlt. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (-> & -> & Hn & Ho & Hax & Hrh).
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (P34 (par (th s t)) (ofl (th s t)).2))) t)
      by (apply frame_local; try done; by left).
    (* the last write of HELP[par][t] helped the current invocation *)
    unfold vish, hval in Hlt. destruct (last (hh s (par (th s t)) t)) as [w |] eqn:Hlw; simpl in Hlt; [| lia].
    destruct (i_help _ _ _ Hi (par (th s t)) t Ht) as [_ Hw].
    destruct (Hw w) as (k & Hk & (x & j & a & Hx & Ha & Hla & Hlg & Hj) & Hb).
    { apply last_lookup_len in Hlw as [Hl _]. by eapply elem_of_list_lookup_2. }
    destruct Hb as [-> | (_ & Hb)]; [| specialize (Hb eq_refl); lia].
    assert (Hto : tookat s t (kk (th s t)) x j) by (by exists a).
    pose proof (tookat_cur_ax N NL s t x j Hi Hx Hto) as ->.
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros. exfalso. eapply (not_annphase s t Hi); [| done..]. rewrite Hpc. by intros [].
    - unfold pcok. th_new. cbn [pc with_pc own ax ofl]. split_and!; try done.
      + exists j. by rewrite (fr_tookat Hf').
      + by apply (fr_nokm Hf').
  Qed.

  Lemma step_rec9 s t p town : inv s → tr t → pc (th s t) = PRecH p town → vish s p t ≤ town →
    inv (setth s t (with_pc (th s t) (P26 p town))).
  Proof.
    intros Hi Ht Hpc Hle. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (-> & -> & Hn & Ho & Hax & Hrh).
    pose proof (frame_refl NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth s t (with_pc (th s t) (P26 (par (th s t)) (ofl (th s t)).2))) t)
      by (apply frame_local; try done; by left).
    assert (Hne : ¬ eff s t (kk (th s t))).
    { intros (x & i & Hx & Hti). pose proof (tookat_cur_ax N NL s t x i Hi Hx Hti) as ->.
      specialize (Hrh i Hti). lia. }
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - by left.
    - intros. exfalso. eapply (not_annphase s t Hi); [| done..]. rewrite Hpc. by intros [].
    - unfold pcok. th_new. cbn [pc with_pc own ax ofl]. unfold pre26. th_new. cbn [with_pc own ofl ax].
      split_and!; try done. unfold idleok. th_new. cbn [with_pc own ofl kk]. split_and!; try done.
      all: try (by rewrite (fr_eff Hf')).
      all: by apply (fr_nokm Hf').
  Qed.

  Lemma pcok_ax s t : pcok s t →
    (pc (th s t) ≠ PIdle ∧ (∀ y h, pc (th s t) ≠ PLH KLoad y h) ∧ ∀ y v, pc (th s t) ≠ PLoad y v) → ax (th s t) < NL.
  Proof.
    unfold pcok. intros Hp (Hn & Hl & Hl'). destruct (pc (th s t)) as [| | [] | | | | | | | [|] | | | y v]; try done;
      unfold lhpre, pre26, failok in Hp; repeat match goal with H : _ ∧ _ |- _ => destruct H end; try done.
    - by destruct (Hl y h).
    - by destruct (Hl' y v).
  Qed.

  Lemma step_tcrash s t : inv s → tr t →
    inv (setth (drop_pwbs s t) t (with_pc (th s t) (tcrash_pc (th s t).(pc)))).
  Proof.
    intros Hi Ht. pose proof (pcok_of N NL s t Hi Ht) as Hp.
    pose proof (frame_drop NL s t (i_wf _ _ _ Hi)) as Hf.
    assert (Hf' : frame s (setth (drop_pwbs s t) t (with_pc (th s t) (tcrash_pc (th s t).(pc)))) t)
      by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - destruct (i_own _ _ _ Hi t Ht) as [? | ?]; [by left | right]. by apply (fr_lastm Hf).
    - apply (vis_mono N NL); [done |]. cbn [pc with_pc]. destruct (pc (th s t)) as [| | [] | | | | | | | | | |]; done.
    - unfold pcok. th_new. cbn [pc with_pc ax].
      destruct (pc (th s t)) as [| | [] y h | | | | | | | [|] | | | y v] eqn:E; cbn [tcrash_pc crash_pc];
        try (apply (pcok_ax s t Hp); rewrite E; done).
      + unfold pcok in Hp. rewrite E in Hp. apply (fr_idleok Hf'); [by th_new | done].
      + unfold pcok in Hp. rewrite E in Hp. destruct Hp as [Hid [Hy _]]. cbn [lhpre lhok held].
        split; [apply (fr_idleok Hf'); [by th_new | done] | done].
      + unfold pcok in Hp. rewrite E in Hp. destruct Hp as [Hid Hy]. cbn [lhpre lhok held].
        split; [apply (fr_idleok Hf'); [by th_new | done] | done].
  Qed.
End owner_steps.

Section same_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation inv := (inv N NL).
  Notation frame := (frame NL).
  Notation pcok := (pcok N NL).

  Lemma inv_same s s' t : inv s → tr t → frame s s' t → th s' t = th s t → pwok s s' t → inv s'.
  Proof.
    intros Hi Ht Hf Hth Hpw. eapply inv_frame; [done | exact Hf | done | | | ].
    - rewrite Hth. destruct (i_own _ _ _ Hi t Ht) as [? | ?]; [by left | right].
      by apply (fr_lastm Hf).
    - intros x w p Hx Hl Hla. rewrite Hth. by destruct (i_vis _ _ _ Hi x w p t Hx Hl Hla).
    - eapply (fr_pcok Hf); [done | done | done | by apply (i_pc _ _ _ Hi)].
  Qed.

  Lemma inv_pfence s t : inv s → tr t → inv (pfence s t).
  Proof.
    intros Hi Ht. pose proof (i_wf _ _ _ Hi) as Hwf. eapply inv_same; [done | done | by apply frame_pfence | done |].
    intros [[t' L] n] Hin Hpw. simpl in Hpw. subst t'. right. simpl.
    destruct (decide (L < length (m_lines (p_mem (pm s))))) as [HL | HL]; [by apply mk_pfence_covers |].
    destruct Hwf as (_ & _ & HF). rewrite Forall_forall in HF. specialize (HF _ Hin). simpl in HF.
    unfold line_hist in HF. rewrite (lookup_ge_None_2 (m_lines (p_mem (pm s))) L) in HF by lia. simpl in HF. lia.
  Qed.

  Lemma inv_ppwb s t L : inv s → tr t → inv (ppwb s t L).
  Proof.
    intros Hi Ht. eapply inv_same; [done | done | by apply frame_ppwb, Hi | done |].
    intros pw Hin _. left. rewrite pwbs_ppwb. by right.
  Qed.

  Lemma inv_tick s t : inv s → tr t → inv (tick s).
  Proof.
    intros Hi Ht. eapply inv_same; [done | done | by apply (frame_tick NL s t), Hi | done |]. intros pw Hin _. by left.
  Qed.
End same_steps.

(** ** Steps that extend histories *)
Section ext.
  Context {N NL : nat}.
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vish := (vish NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hcov := (hcov NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).

  (** [s'] extends [s]'s histories without new writes of thread [u]'s
      invocations, with the same marks, more write-backs, the same
      registers of [u] and the same committed state of every thread. *)
  Record ext (s s' : state) (u : nat) : Prop := {
    ex_hx : ∀ x, x < NL → hx s x `prefix_of` hx s' x;
    ex_tk : ∀ k x i, x < NL → tookat s' u k x i → tookat s u k x i;
    ex_hm : hm s' u = hm s u;
    ex_hh : ∀ p u', tr u' → hh s p u' `prefix_of` hh s' p u';
    ex_mk : ∀ L, mk s' L = mk s L;
    ex_pwbs : ∀ pw, pw ∈ pwbs s → pw ∈ pwbs s';
    ex_clock : clock s ≤ clock s';
    ex_th : th s' u = th s u;
    ex_kk : ∀ u', kk (th s' u') = kk (th s u');
    ex_fl : ∀ u', fl (th s' u') = fl (th s u');
    ex_ofl : ∀ u', ofl (th s' u') = ofl (th s u');
    ex_wf : p_wf (pm s);
    ex_vish : ∀ p u', tr u' → vish s p u' ≤ vish s' p u';
    ex_aba : ∀ c y h a b, pc (th s u) = PLH c y h → held h = Some a →
               last (hx s' y) = Some b → phys2 b = phys2 a → last (hx s y) = Some b;
  }.

  Arguments ex_hx {_ _ _} _.
  Arguments ex_tk {_ _ _} _.
  Arguments ex_hm {_ _ _} _.
  Arguments ex_hh {_ _ _} _.
  Arguments ex_mk {_ _ _} _.
  Arguments ex_pwbs {_ _ _} _.
  Arguments ex_clock {_ _ _} _.
  Arguments ex_th {_ _ _} _.
  Arguments ex_kk {_ _ _} _.
  Arguments ex_fl {_ _ _} _.
  Arguments ex_ofl {_ _ _} _.
  Arguments ex_wf {_ _ _} _.
  Arguments ex_vish {_ _ _} _.
  Arguments ex_aba {_ _ _} _.

  Context {s s' : state} {u : nat} (He : ext s s' u) (Hi : inv s) (Hu : tr u).

  Lemma ex_par u' : par (th s' u') = par (th s u').
  Proof. unfold par. by rewrite (ex_ofl He). Qed.
  Lemma ex_lookup x i a : x < NL → hx s x !! i = Some a → hx s' x !! i = Some a.
  Proof. intros Hx Ha. destruct (ex_hx He x Hx) as [l ->]. by apply lookup_app_l_Some. Qed.
  Lemma ex_tookat' k x i : x < NL → tookat s u k x i → tookat s' u k x i.
  Proof. intros Hx (w & Hw & Hg). exists w. split; [by apply ex_lookup | done]. Qed.
  Lemma ex_eff k : eff s' u k ↔ eff s u k.
  Proof.
    split; intros (x & i & Hx & Ht); exists x, i; split; try done;
      [by apply (ex_tk He) | by apply ex_tookat'].
  Qed.
  Lemma ex_nokm : nokm s u → nokm s' u.
  Proof. unfold nokm. by rewrite (ex_hm He), (ex_kk He). Qed.
  Lemma ex_lastm P : lastm s u P → lastm s' u P.
  Proof. unfold lastm. by rewrite (ex_hm He), (ex_kk He). Qed.
  Lemma ex_mdur : mdur s u → mdur s' u.
  Proof. intros [Hm Hl]. split; [by rewrite (ex_mk He), (ex_hm He) | by apply ex_lastm]. Qed.
  Lemma ex_mpend : mpend s u → mpend s' u.
  Proof.
    unfold mpend. rewrite (ex_hm He), (ex_mk He). intros [? | ?]; [left; by apply (ex_pwbs He) | by right].
  Qed.
  Lemma ex_idleok : idleok s u → idleok s' u.
  Proof.
    intros (Hne & Hn & Ho). split_and!; [rewrite ex_eff, (ex_kk He); done | by apply ex_nokm |].
    by rewrite (ex_th He).
  Qed.
  Lemma ex_pre26 p town : pre26 s u p town → pre26 s' u p town.
  Proof.
    intros (Hp & Ht & Hid & Hax). split_and!; [by rewrite ex_par | by rewrite (ex_ofl He) | by apply ex_idleok |].
    by rewrite (ex_th He).
  Qed.
  Lemma ex_failok : failok s u → failok s' u.
  Proof.
    intros (Hne & Hl & Ho & Hax). split_and!; [rewrite ex_eff, (ex_kk He); done | by apply ex_lastm | |];
      by rewrite (ex_th He).
  Qed.
  Lemma ex_lhpre c y : lhpre N NL s u c y → lhpre N NL s' u c y.
  Proof.
    destruct c; simpl; rewrite ?(ex_th He).
    - intros [? ?]. split; [by apply ex_pre26 | done].
    - intros [? ?]. split; [by apply ex_failok | done].
    - by apply ex_idleok.
  Qed.
  Lemma ex_hval_take p u' n : tr u' → n ≤ length (hh s p u') → take n (hh s' p u') = take n (hh s p u').
  Proof.
    intros Hu' Hn. destruct (ex_hh He p u' Hu') as [l Hl]. rewrite Hl. by apply take_app_le.
  Qed.
  Lemma ex_mk_le L : mk s L ≤ length (hc s L).
  Proof.
    destruct (ex_wf He) as (_ & Hle & _). specialize (Hle L). unfold mk, hc, ids. by rewrite !fmap_length.
  Qed.
  Lemma ex_hcov w p u' tc : tr u' → hcov s w p u' tc → hcov s' w p u' tc.
  Proof.
    unfold hcov. rewrite (ex_mk He). intros Hu' [(n & Hin & Htc) | Htc].
    - left. exists n. split; [by apply (ex_pwbs He) |]. rewrite ex_hval_take; [done | done |].
      destruct (ex_wf He) as (_ & _ & HF). rewrite Forall_forall in HF. specialize (HF _ Hin). simpl in HF.
      unfold hh, hc, ids. by rewrite !fmap_length.
    - right. rewrite ex_hval_take; [done | done |]. pose proof (ex_mk_le (LHl p u')). unfold hh. by rewrite fmap_length.
  Qed.
  Lemma ex_hi p u' k tc : hi s p u' k tc → hi s' p u' k tc.
  Proof. unfold hi. by rewrite (ex_kk He), (ex_fl He), (ex_ofl He), ex_par. Qed.
  Lemma ex_lcov w y i : lcov s w y i → lcov s' w y i.
  Proof.
    unfold lcov. rewrite (ex_mk He). intros [(n & Hin & Hi') | ?]; [left; exists n; split; [by apply (ex_pwbs He) | done] | by right].
  Qed.

  Lemma ex_lhok c y h : pc (th s u) = PLH c y h → lhok s u y h → lhok s' u y h.
  Proof.
    intros Hpc [Hy Hh]. split; [done |]. destruct (held h) as [a |] eqn:Eh; [| done].
    destruct Hh as (i & p & u' & k & Ha & Hla & Hlg & Hab & Hst). exists i, p, u', k.
    split_and!; try done.
    - by apply ex_lookup.
    - intros b Hb Hph. apply Hab; [| done]. by eapply (ex_aba He).
    - pose proof (ex_clock He) as Hc.
      destruct h; simpl in *; rewrite ?(ex_kk He), ?(ex_ofl He); try done.
      + destruct Hst as (? & ?). split; [lia | done].
      + destruct Hst as (? & ? & ?). split_and!; [lia | done | by apply ex_hi].
      + destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | by apply ex_hi | done | by apply ex_lcov].
      + destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | by apply ex_hi | by rewrite (ex_mk He) |].
        apply ex_hcov; [| done]. by eapply (held_tr N NL s y i a p u').
  Qed.

  Lemma ex_tookat_mk k x : x < NL → (∃ i, tookat s u k x i ∧ i < mk s (LX x)) → (∃ i, tookat s' u k x i ∧ i < mk s' (LX x)).
  Proof. intros Hx (i & Ht & Hi'). exists i. rewrite (ex_mk He). split; [by apply ex_tookat' | done]. Qed.

  Lemma ex_pcok : pcok s u → pcok s' u.
  Proof.
    unfold pcok. rewrite (ex_th He).
    destruct (pc (th s u)) as [| p town | c y h | p town | | p town | p town | p ts | p ts | [|] | | p town | y v] eqn:Epc;
      intros Hp; [| | | | | | | | | | | | | destruct Hp; split; [by apply ex_idleok | done]].
    - by apply ex_idleok.
    - by apply ex_pre26.
    - destruct Hp as (? & ?). split; [by apply ex_lhpre | by eapply ex_lhok].
    - by apply ex_pre26.
    - by apply ex_failok.
    - destruct Hp as (Hp & Ht & (i & Hti) & Hn & Ho & Hax).
      split_and!; try done; [exists i; by apply ex_tookat' | by apply ex_nokm].
    - destruct Hp as (Hp & Ht & Hti & Hn & Ho & Hax).
      split_and!; try done; [by apply ex_tookat_mk | by apply ex_nokm].
    - destruct Hp as (Hp & Hti & Hl & Hmp & Ho & Hax).
      split_and!; try done; [by apply ex_tookat_mk | by apply ex_lastm | by apply ex_mpend].
    - destruct Hp as (Hp & Hti & Hl & Hmp & Ho & Hax).
      split_and!; try done; [by apply ex_tookat_mk | by apply ex_lastm | by apply ex_mpend].
    - destruct Hp as ((i & Hti & Hlen & Hcov) & Hmd & Hl & Hax). split_and!; try done.
      + exists i. split_and!; [by apply ex_tookat' | | by apply ex_lcov].
        destruct (ex_hx He _ Hax) as [l ->]. rewrite app_length. lia.
      + by apply ex_mdur.
      + by apply ex_lastm.
    - by apply ex_failok.
    - done.
    - destruct Hp as (Hp & Ht & Hn & Ho & Hax & Hh). split_and!; try done.
      + by apply ex_nokm.
      + intros i Hti. apply (ex_tk He) in Hti; [| done].
        eapply Nat.lt_le_trans; [by apply (Hh i) | by apply (ex_vish He)].
  Qed.
End ext.

Section write_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation locok := (locok N).
  Notation mmtok := (mmtok N NL).
  Notation helpok := (helpok NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).

  (** The views of a state whose histories of location [X] got [w0]. *)
  Lemma lookup_snoc_cases {A} (l : list A) w i a : (l ++ [w]) !! i = Some a →
    (l !! i = Some a) ∨ (i = length l ∧ a = w).
  Proof.
    intros H. apply lookup_app_Some in H as [? | [Hle H]]; [by left | right].
    apply list_lookup_singleton_Some in H as [? <-]. split; [lia | done].
  Qed.

  Lemma tookat_snoc s s' u k x i X w0 :
    (∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = X) then [w0] else [])) → x < NL →
    tookat s' u k x i ↔ tookat s u k x i ∨ (x = X ∧ i = length (hx s x) ∧ lg w0 = Some (u, k)).
  Proof.
    intros Hhx Hx. unfold tookat. rewrite (Hhx x Hx). split.
    - intros (w & Hw & Hg). case_decide as HX.
      + apply lookup_snoc_cases in Hw as [Hw | [-> ->]]; [left; by exists w | right; done].
      + left. exists w. by rewrite app_nil_r in Hw.
    - intros [(w & Hw & Hg) | (-> & -> & Hg)].
      + exists w. split; [| done]. by apply lookup_app_l_Some.
      + exists w0. rewrite decide_True by done. split; [| done]. rewrite lookup_app_r by lia.
        by rewrite Nat.sub_diag.
  Qed.

  Lemma step_26ok_core s t p town n : inv s → tr t → pc (th s t) = P26 p town →
    let T := th s t in
    let w := LW (an T) (Some (p, t)) n (Some (t, kk T)) in
    phys (visx s (ax T)) = (ao T, None) → h_aba2 s (ax T) w →
    inv (setth (pwrite s (LX (ax T)) (CLoc w)) t (with_pc T (P33 p town))).
  Proof.
    intros Hi Ht Hpc T w Hph Haba.
    pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hpar & Htown & (Hne & Hn & Ho) & Hax).
    set (X := ax T) in *.
    set (s' := setth (pwrite s (LX X) (CLoc w)) t (with_pc T (P33 p town))).
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    assert (Hhx : ∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = X) then [w] else [])).
    { intros x Hx. apply (hx_wloc N NL); done. }
    assert (Hhm : ∀ u, hm s' u = hm s u) by (intros; apply (hm_wloc N NL); done).
    assert (Hhh : ∀ p u, hh s' p u = hh s p u) by (intros; apply (hh_wloc N NL); done).
    assert (Hmk : ∀ L, mk s' L = mk s L) by done.
    assert (Hth : ∀ u, u ≠ t → th s' u = th s u) by (intros u Hu; unfold s'; by rewrite th_setth, decide_False).
    assert (Htt : th s' t = with_pc T (P33 p town)) by (unfold s'; by rewrite th_setth, decide_True).
    assert (Hkk : ∀ u, kk (th s' u) = kk (th s u)) by (intros u; destruct (decide (u = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hfl : ∀ u, fl (th s' u) = fl (th s u)) by (intros u; destruct (decide (u = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hofl : ∀ u, ofl (th s' u) = ofl (th s u)) by (intros u; destruct (decide (u = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hres : ∀ u, res (th s' u) = res (th s u)) by (intros u; destruct (decide (u = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hax' : ∀ u, ax (th s' u) = ax (th s u) ∧ an (th s' u) = an (th s u))
      by (intros u; destruct (decide (u = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hpar' : ∀ u, par (th s' u) = par (th s u)) by (intros u; unfold par; by rewrite Hofl).
    assert (Hlastc : ∀ b, last (hx s X) = Some b → la b = None).
    { intros b Hb. rewrite (visx_last s X b Hb) in Hph. unfold phys in Hph. congruence. }
    assert (Hlen : ∀ x i a, x < NL → hx s x !! i = Some a → hx s' x !! i = Some a).
    { intros x i a Hx Ha. rewrite Hhx by done. by apply lookup_app_l_Some. }
    assert (Htk : ∀ u k x i, x < NL → tookat s' u k x i ↔ tookat s u k x i ∨ (x = X ∧ i = length (hx s x) ∧ u = t ∧ k = kk T)).
    { intros u k x i Hx. rewrite (tookat_snoc s s' u k x i X w Hhx Hx). simpl. naive_solver. }
    assert (Hef : ∀ u k, eff s' u k ↔ eff s u k ∨ (u = t ∧ k = kk T)).
    { intros u k. unfold eff. split.
      - intros (x & i & Hx & Hti). rewrite (Htk u k x i Hx) in Hti.
        destruct Hti as [Hti | (-> & -> & -> & ->)]; [left; by exists x, i | by right].
      - intros [(x & i & Hx & Hti) | [-> ->]].
        + exists x, i. split; [done |]. apply Htk; [done | by left].
        + exists X, (length (hx s X)). split; [done |]. apply Htk; [done | right; naive_solver]. }
    assert (Hwf' : p_wf (pm s')) by (apply p_write_wf, Hi).
    split.
    - done.
    - unfold nl_ok. unfold s'. rewrite pm_setth, pwrite_lines. apply Hi.
    - apply ids_ok_pwrite; [done | rewrite Hnl; by apply LX_lt].
    - intros u Hu. rewrite Hfl, Hofl, Hres, Hkk. apply (i_clock _ _ _ Hi u Hu).
    - intros u w' Hu. rewrite Hhm. apply (i_mclock _ _ _ Hi u w' Hu).
    - intros p' u w' Hu. rewrite Hhh. apply (i_hclock _ _ _ Hi p' u w' Hu).
    - (* locations *)
      intros x i w0 Hx Hw0. rewrite Hhx in Hw0 by done.
      assert (Hold : ∀ i w0, hx s x !! i = Some w0 → locok s' x i w0).
      { intros i' w1 Hw1. destruct (i_loc _ _ _ Hi x i' w1 Hx Hw1) as [? | (p' & u & k & Hla & Hlg & Hu & Hk & Hnext & Hcur & Hold)];
          [by left | right].
        exists p', u, k. rewrite Hkk, Hmk, Hpar'. destruct (Hax' u) as [-> ->]. split_and!; try done.
        intros w' Hw'. rewrite Hhx in Hw' by done. case_decide as HX; [| rewrite app_nil_r in Hw'; by apply Hnext].
        apply lookup_snoc_cases in Hw' as [Hw' | [Hi' ->]]; [by apply Hnext |].
        exfalso. subst x.
        assert (last (hx s X) = Some w1) as Hl.
        { rewrite last_lookup. by replace (pred (length (hx s X))) with i' by lia. }
        apply Hlastc in Hl. congruence. }
      case_decide as HX.
      + apply lookup_snoc_cases in Hw0 as [Hw0 | [-> ->]]; [by apply Hold |].
        subst x. right. exists p, t, (kk T). rewrite Hkk, Hpar'. destruct (Hax' t) as [-> ->]. split_and!; try done.
        * intros w' Hw'. rewrite Hhx in Hw' by done. rewrite decide_True in Hw' by done.
          rewrite lookup_ge_None_2 in Hw'; [done | rewrite app_length; simpl; lia].
        * intros Hlt. exfalso. unfold T in Hlt. lia.
      + rewrite app_nil_r in Hw0. by apply Hold.
    - (* at most once *)
      intros u k x i x' i' Hx Hx'. rewrite !Htk by done.
      intros [Hti | (Hx1 & Hi1 & Hu1 & Hk1)] [Hti' | (Hx2 & Hi2 & Hu2 & Hk2)].
      + by apply (i_once _ _ _ Hi u k x i x' i').
      + exfalso. apply Hne. subst. by exists x, i.
      + exfalso. apply Hne. subst. by exists x', i'.
      + subst. done.
    - (* results *)
      intros u k Hu. rewrite Hkk, Hres, Hef. intros Hk. rewrite (i_res _ _ _ Hi u k Hu Hk).
      split; [by left | intros [? | [-> ->]]; [done | unfold T in *; lia]].
    - (* mementos *)
      intros u i w' Hu. rewrite Hhm. intros Hw'. destruct (i_mmt _ _ _ Hi u i w' Hu Hw') as [(Hg & Hlt & Hl & Hok & Hf) | ?];
        [left | right; by rewrite Hkk, Hfl, Hofl].
      assert (u ≠ t) as Hut.
      { intros ->. apply (Hn w'); [by eapply elem_of_list_lookup_2 | done]. }
      rewrite Hkk, Hfl, Hpar', Hhm. split_and!; try done.
      + intros Hm. destruct (Hok Hm) as [? (x & j & Hx & Hj & Hjm)]. split; [done |].
        exists x, j. rewrite Htk by done. split_and!; [done | by left | by rewrite Hmk].
      + intros Hm. rewrite Hef. intros [? | [? _]]; [by apply Hf | done].
    - (* OWN *)
      intros u Hu. destruct (decide (u = t)) as [-> | Hut].
      + left. by rewrite Htt.
      + rewrite Hth by done. destruct (i_own _ _ _ Hi u Hu) as [? | ?]; [by left | right].
        unfold lastm in *. by rewrite Hhm, Hkk.
    - (* HELP *)
      intros p' u Hu. destruct (i_help _ _ _ Hi p' u Hu) as [Hinc Hw]. split; [by rewrite Hhh |].
      intros w' Hin. rewrite Hhh in Hin. destruct (Hw w' Hin) as (k & Hk & (x & j & a & Hx & Ha & Hla & Hlg & Hj) & Hb).
      exists k. split_and!; try done.
      + exists x, j, a. rewrite Hmk. split_and!; try done. by apply Hlen.
      + by rewrite Hkk, Hfl, Hofl, Hpar'.
    - (* CL *)
      intros u x i Hu Hx. rewrite Hkk, Htk by done. intros [Hti | (-> & -> & -> & _)] Hlt.
      + rewrite Hhx in Hlt by done.
        assert (S i < length (hx s x)) as Hlt'.
        { case_decide as HX; [| by rewrite app_nil_r in Hlt]. subst x. rewrite app_length in Hlt. simpl in Hlt.
          destruct (decide (S i = length (hx s X))) as [Heq | ?]; [| lia]. exfalso.
          destruct Hti as (w1 & Hw1 & Hg1). assert (last (hx s X) = Some w1) as Hl.
          { rewrite last_lookup. by replace (pred (length (hx s X))) with i by lia. }
          apply Hlastc in Hl. destruct (i_loc _ _ _ Hi X i w1 Hx Hw1) as [[_ Hg] | (? & ? & ? & Hla & _)]; congruence. }
        destruct (i_cl _ _ _ Hi u x i Hu Hx Hti Hlt') as [Hm | Hh]; [left | right].
        * destruct Hm as [Hm (w1 & Hl & Hg & Hf)]. split; [by rewrite Hmk, Hhm |]. exists w1. by rewrite Hhm, Hkk.
        * rewrite Hofl, Hpar'. unfold hmk. by rewrite Hhh, Hmk.
      + rewrite Hhx in Hlt by done. rewrite decide_True in Hlt by done. rewrite app_length in Hlt. simpl in Hlt. lia.
    - (* visibility *)
      intros x w0 p' u Hx. rewrite Hhx by done. case_decide as HX.
      + rewrite last_snoc. intros [= <-] Hla. simpl in Hla. injection Hla as <- <-.
        rewrite Hkk, Htt. split; done.
      + rewrite app_nil_r. intros Hl Hla. destruct (i_vis _ _ _ Hi x w0 p' u Hx Hl Hla) as [Hg Hph']. rewrite Hkk.
        split; [done |]. destruct (decide (u = t)) as [-> | Hut]; [| by rewrite Hth].
        rewrite Hpc in Hph'. done.
    - (* program counters *)
      intros u Hu. destruct (decide (u = t)) as [-> | Hut].
      + unfold pcok. rewrite Htt. cbn [pc with_pc]. rewrite par_with_pc. cbn [ofl kk ax own with_pc].
        split_and!; try done.
        * exists (length (hx s X)). apply Htk; [exact Hax | right; split_and!; done].
        * unfold nokm. rewrite Hhm, Hkk. done.
      + refine (ex_pcok _ Hi Hu (i_pc _ _ _ Hi u Hu)).
        split; try done.
        * intros x Hx. rewrite Hhx by done. by eexists.
        * intros k x i Hx. rewrite Htk by done. intros [? | (_ & _ & ? & _)]; [done | congruence].
        * intros p' u' _. rewrite Hhh. done.
        * by apply Hth.
        * apply Hi.
        * intros p' u' _. unfold vish. by rewrite Hhh.
        * intros c y h a b Hpcu Hh Hl Hpb. destruct (decide (y < NL)) as [Hy | Hy].
          -- rewrite Hhx in Hl by done. case_decide as HX; [| by rewrite app_nil_r in Hl].
             rewrite last_snoc in Hl. injection Hl as <-. exfalso. subst y.
             apply (Haba u c X h a Hpcu Hh eq_refl). by rewrite Hpb.
          -- exfalso. pose proof (i_pc _ _ _ Hi u Hu) as Hpu. unfold pcok in Hpu. rewrite Hpcu in Hpu.
             destruct Hpu as [_ [? _]]. lia.
  Qed.
End write_steps.

Section clean_write.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation locok := (locok N).

  (** A step of thread [t] that appends, to location [X], the clean word of
      its visible annotated word [a] (of invocation [kk u] of thread [u]):
      the second plain CAS of the owner or of a helper. *)
  Lemma inv_clean_write s s' t X a p u : inv s → tr t → X < NL →
    last (hx s X) = Some a → la a = Some (p, u) →
    (∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = X) then [LW (lv a) None 0 None] else [])) →
    (∀ u', hm s' u' = hm s u') → (∀ p' u', hh s' p' u' = hh s p' u') → (∀ L, mk s' L = mk s L) →
    (∀ pw, pw ∈ pwbs s → pw ∈ pwbs s') → p_wf (pm s') → nl_ok s' → ids_ok s' → clock s' = clock s →
    (∀ u', u' ≠ t → th s' u' = th s u') →
    kk (th s' t) = kk (th s t) → fl (th s' t) = fl (th s t) → ofl (th s' t) = ofl (th s t) →
    res (th s' t) = res (th s t) → ax (th s' t) = ax (th s t) → an (th s' t) = an (th s t) →
    own (th s' t) = own (th s t) →
    (mdur s u ∨ (ofl (th s u)).2 < hmk s (par (th s u)) u) →
    (∀ x w p', x < NL → last (hx s' x) = Some w → la w = Some (p', t) → annphase (pc (th s' t))) →
    pcok s' t → inv s'.
  Proof.
    intros Hi Ht HX Hla0 Hlaa Hhx Hhm Hhh Hmk Hpw Hwf Hnl Hids Hclk Hth Hk Hf Ho Hr Hax Han Hown Hcl Hvt Hpct.
    destruct (vis_own_ann N NL s X a p u Hi HX Hla0 Hlaa) as (Hu & Hga & Hpha & HXu & Hlv & Hp & Hta).
    assert (Hkk : ∀ u', kk (th s' u') = kk (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hfl : ∀ u', fl (th s' u') = fl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hofl : ∀ u', ofl (th s' u') = ofl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hres : ∀ u', res (th s' u') = res (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hax' : ∀ u', ax (th s' u') = ax (th s u') ∧ an (th s' u') = an (th s u'))
      by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hpar' : ∀ u', par (th s' u') = par (th s u')) by (intros u'; unfold par; by rewrite Hofl).
    assert (Htk : ∀ u' k x i, x < NL → tookat s' u' k x i ↔ tookat s u' k x i).
    { intros u' k x i Hx. rewrite (tookat_snoc NL s s' u' k x i X _ Hhx Hx). simpl. naive_solver. }
    assert (Hef : ∀ u' k, eff s' u' k ↔ eff s u' k).
    { intros u' k. unfold eff. split; intros (x & i & Hx & Hti); exists x, i; split; try done; by apply Htk. }
    assert (Hlen : ∀ x i b, x < NL → hx s x !! i = Some b → hx s' x !! i = Some b).
    { intros x i b Hx Hb. rewrite Hhx by done. by apply lookup_app_l_Some. }
    destruct (last_lookup_len _ _ Hla0) as [Ha0 Hlen0].
    split; try done.
    - intros u' Hu'. rewrite Hfl, Hofl, Hres, Hkk, Hclk. apply (i_clock _ _ _ Hi u' Hu').
    - intros u' w' Hu'. rewrite Hhm, Hclk. apply (i_mclock _ _ _ Hi u' w' Hu').
    - intros p' u' w' Hu'. rewrite Hhh, Hclk. apply (i_hclock _ _ _ Hi p' u' w' Hu').
    - intros x i w0 Hx Hw0. rewrite Hhx in Hw0 by done.
      assert (Hold : ∀ i w1, hx s x !! i = Some w1 → locok s' x i w1).
      { intros i' w1 Hw1. destruct (i_loc _ _ _ Hi x i' w1 Hx Hw1) as [? | (p' & u' & k & Hla & Hlg & Hu' & Hk' & Hnext & Hcur & Hold)];
          [by left | right].
        exists p', u', k. rewrite Hkk, Hmk, Hpar'. destruct (Hax' u') as [-> ->]. split_and!; try done.
        intros w' Hw'. rewrite Hhx in Hw' by done. case_decide as HXx; [| rewrite app_nil_r in Hw'; by apply Hnext].
        apply lookup_snoc_cases in Hw' as [Hw' | [Hi' ->]]; [by apply Hnext |]. subst x.
        assert (w1 = a) as -> by (replace i' with (pred (length (hx s X))) in Hw1 by lia;
                                  rewrite Ha0 in Hw1; by injection Hw1).
        done. }
      case_decide as HXx.
      + apply lookup_snoc_cases in Hw0 as [Hw0 | [_ ->]]; [by apply Hold | by left].
      + rewrite app_nil_r in Hw0. by apply Hold.
    - intros u' k x i x' i' Hx Hx'. rewrite !Htk by done. by apply (i_once _ _ _ Hi).
    - intros u' k Hu'. rewrite Hkk, Hres, Hef. by apply (i_res _ _ _ Hi).
    - intros u' i w' Hu'. rewrite Hhm. intros Hw'.
      destruct (i_mmt _ _ _ Hi u' i w' Hu' Hw') as [(Hg & Hlt & Hl & Hok & Hfa) | ?];
        [left | right; by rewrite Hkk, Hfl, Hofl].
      rewrite Hkk, Hfl, Hpar', Hhm. split_and!; try done.
      + intros Hm. destruct (Hok Hm) as [? (x & j & Hx & Hj & Hjm)]. split; [done |].
        exists x, j. rewrite Htk by done. split_and!; [done | done | by rewrite Hmk].
      + intros Hm. rewrite Hef. by apply Hfa.
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut]; [rewrite Hown, Ho | rewrite Hth by done];
        (destruct (i_own _ _ _ Hi _ Hu') as [? | ?]; [by left | right]; unfold lastm in *; by rewrite Hhm, Hkk).
    - intros p' u' Hu'. destruct (i_help _ _ _ Hi p' u' Hu') as [Hinc Hw]. split; [by rewrite Hhh |].
      intros w' Hin. rewrite Hhh in Hin. destruct (Hw w' Hin) as (k & Hk' & (x & j & b & Hx & Hb & Hla & Hlg & Hj) & Hb').
      exists k. split_and!; try done.
      + exists x, j, b. rewrite Hmk. split_and!; try done. by apply Hlen.
      + by rewrite Hkk, Hfl, Hofl, Hpar'.
    - intros u' x i Hu' Hx. rewrite Hkk, Htk by done. intros Hti Hlt. rewrite Hhx in Hlt by done.
      assert (Hcl' : mdur s u' ∨ (ofl (th s u')).2 < hmk s (par (th s u')) u').
      { destruct (decide (S i < length (hx s x))) as [Hlt' | Hge]; [by apply (i_cl _ _ _ Hi u' x i Hu' Hx Hti) |].
        case_decide as HXx; [| rewrite app_nil_r in Hlt; lia]. subst x. rewrite app_length in Hlt. simpl in Hlt.
        assert (i = pred (length (hx s X))) as -> by lia.
        destruct Hti as (w1 & Hw1 & Hg1). rewrite Ha0 in Hw1. injection Hw1 as <-. rewrite Hga in Hg1.
        injection Hg1 as <- _. done. }
      destruct Hcl' as [(Hm & w1 & Hl & Hg & Hf') | Hh]; [left | right].
      + split; [by rewrite Hmk, Hhm |]. exists w1. by rewrite Hhm, Hkk.
      + rewrite Hofl, Hpar'. unfold hmk. by rewrite Hhh, Hmk.
    - intros x w0 p' u' Hx. rewrite Hhx by done. case_decide as HXx.
      + rewrite last_snoc. intros [= <-] Hla. done.
      + rewrite app_nil_r. intros Hl Hla. destruct (decide (u' = t)) as [-> | Hut].
        * split; [rewrite Hkk; by destruct (i_vis _ _ _ Hi x w0 p' t Hx Hl Hla) |].
          eapply Hvt; [done | | done]. by rewrite Hhx, decide_False, app_nil_r.
        * destruct (i_vis _ _ _ Hi x w0 p' u' Hx Hl Hla) as [Hg Hph']. rewrite Hkk, Hth by done. done.
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut]; [done |].
      refine (ex_pcok _ Hi Hu' (i_pc _ _ _ Hi u' Hu')).
      split; try done.
      + intros x Hx. rewrite Hhx by done. by eexists.
      + intros k x i Hx. by rewrite Htk.
      + intros p' u'' _. by rewrite Hhh.
      + rewrite Hclk. done.
      + by apply Hth.
      + apply Hi.
      + intros p' u'' _. unfold vish. by rewrite Hhh.
      + intros c y h b b' Hpcu Hh Hl Hpb. destruct (decide (y < NL)) as [Hy | Hy].
        * rewrite Hhx in Hl by done. case_decide as HXy; [| by rewrite app_nil_r in Hl].
          rewrite last_snoc in Hl. injection Hl as <-. exfalso.
          pose proof (i_pc _ _ _ Hi u' Hu') as Hpu. unfold pcok in Hpu. rewrite Hpcu in Hpu.
          destruct Hpu as [_ [_ Hhld]]. rewrite Hh in Hhld. destruct Hhld as (? & ? & ? & ? & _ & Hlab & _).
          unfold phys2, phys in Hpb. simpl in Hpb. injection Hpb as _ Hpb _. congruence.
        * exfalso. pose proof (i_pc _ _ _ Hi u' Hu') as Hpu. unfold pcok in Hpu. rewrite Hpcu in Hpu.
          destruct Hpu as [_ [? _]]. lia.
  Qed.
End clean_write.

Section clean_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation pre26 := (pre26 N NL).
  Notation idleok := (idleok N NL).
  Notation failok := (failok N NL).
  Notation frame := (frame NL).

  (** LOADHELP's return into its caller, after a step that changed neither
      the thread's effects nor its memento. *)
  Lemma pcok_ret_gen s s' t c y v :
    (∀ k, eff s' t k ↔ eff s t k) → hm s' t = hm s t →
    kk (th s' t) = kk (th s t) → ofl (th s' t) = ofl (th s t) → own (th s' t) = own (th s t) →
    ax (th s' t) = ax (th s t) →
    lhpre N NL s t c y → y < NL → pc (th s' t) = lh_ret (th s' t) c y v → pcok s' t.
  Proof.
    intros Hef Hhm Hk Ho Hown Hax Hpre Hy Hpc. unfold pcok. rewrite Hpc.
    assert (Hid : idleok s t → idleok s' t).
    { intros (Hne & Hn & Ho'). split_and!; [by rewrite Hef, Hk | unfold nokm; by rewrite Hhm, Hk | by rewrite Hown, Ho]. }
    destruct c as [p town | |]; simpl in Hpre |- *.
    - destruct Hpre as [(Hp & Ht & Hi' & Hax') _].
      assert (pre26 s' t p town) by (split_and!; [unfold par; by rewrite Ho | by rewrite Ho | by apply Hid | by rewrite Hax]).
      by destruct (decide (v = ao (th s' t))).
    - destruct Hpre as [(Hne & Hl & Ho' & Hax') _]. split_and!.
      + by rewrite Hef, Hk.
      + unfold lastm in *. by rewrite Hhm, Hk.
      + by rewrite Hown, Ho.
      + by rewrite Hax.
    - split; [by apply Hid | done].
  Qed.

  Lemma lhpre_gen s s' t c y :
    (∀ k, eff s' t k ↔ eff s t k) → hm s' t = hm s t →
    kk (th s' t) = kk (th s t) → ofl (th s' t) = ofl (th s t) → own (th s' t) = own (th s t) →
    ax (th s' t) = ax (th s t) →
    lhpre N NL s t c y → lhpre N NL s' t c y.
  Proof.
    intros Hef Hhm Hk Ho Hown Hax Hpre.
    assert (Hid : idleok s t → idleok s' t).
    { intros (Hne & Hn & Ho'). split_and!; [by rewrite Hef, Hk | unfold nokm; by rewrite Hhm, Hk | by rewrite Hown, Ho]. }
    destruct c as [p town | |]; simpl in Hpre |- *.
    - destruct Hpre as [(Hp & Ht & Hi' & Hax') Hy]. rewrite Hax.
      split; [split_and!; [unfold par; by rewrite Ho | by rewrite Ho | by apply Hid | by rewrite Hax] | done].
    - destruct Hpre as [(Hne & Hl & Ho' & Hax') Hy]. rewrite Hax. split; [| done]. split_and!.
      + by rewrite Hef, Hk.
      + unfold lastm in *. by rewrite Hhm, Hk.
      + by rewrite Hown, Ho.
      + by rewrite Hax.
    - by apply Hid.
  Qed.

  Lemma no_t_pwbs_pfence s t : ∀ pw, pw ∈ pwbs (pfence s t) → pw.1.1 ≠ t.
  Proof. intros pw Hin. rewrite pwbs_pfence in Hin. by apply elem_of_list_filter in Hin as [? _]. Qed.

  Lemma step_18ok_core s t c y a tc : inv s → tr t → (∀ pw, pw ∈ pwbs s → pw.1.1 ≠ t) →
    pc (th s t) = PLH c y (H18 a tc) → phys2 (visx s y) = phys2 a →
    inv (setth (pwrite s (LX y) (CLoc (LW (lv a) None 0 None))) t (with_pc (th s t) (lh_ret (th s t) c y (lv a)))).
  Proof.
    intros Hi Ht Hnp Hpc Hph. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre [Hy (i & p & u & k & Ha & Hla & Hlg & Hab & Htc & Hlow & Hhi & Himk & Hcov)]].
    assert (la (visx s y) = Some (p, u)) as Hlv by (unfold phys2, phys in Hph; injection Hph; congruence).
    pose proof (visx_ann s y p u Hlv) as Hl. pose proof (Hab _ Hl Hph) as Heq. rewrite Heq in Hl.
    destruct (vis_own_ann N NL s y a p u Hi Hy Hl Hla) as (Hu & Hga & _ & _ & _ & Hp & _).
    rewrite Hlg in Hga. injection Hga as ->.
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    set (s' := setth (pwrite s (LX y) (CLoc (LW (lv a) None 0 None))) t (with_pc (th s t) (lh_ret (th s t) c y (lv a)))).
    assert (Hhx : ∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = y) then [LW (lv a) None 0 None] else [])).
    { intros x Hx. apply (hx_wloc N NL); done. }
    assert (Htt : th s' t = with_pc (th s t) (lh_ret (th s t) c y (lv a))) by (unfold s'; by rewrite th_setth, decide_True).
    eapply (inv_clean_write N NL s s' t y a p u); try done.
    - intros u'. apply (hm_wloc N NL); done.
    - intros p' u'. apply (hh_wloc N NL); done.
    - by apply p_write_wf, Hi.
    - unfold nl_ok, s'. rewrite pm_setth, pwrite_lines. apply Hi.
    - apply ids_ok_pwrite; [done | rewrite Hnl; by apply LX_lt].
    - intros u' Hu'. unfold s'. by rewrite th_setth, decide_False.
    - by rewrite Htt.
    - by rewrite Htt.
    - by rewrite Htt.
    - by rewrite Htt.
    - by rewrite Htt.
    - by rewrite Htt.
    - by rewrite Htt.
    - right. subst p. eapply Nat.lt_le_trans; [by apply Hlow |].
      destruct Hcov as [(n & Hin & _) | Hcov]; [by destruct (Hnp _ Hin) | done].
    - intros x w p' Hx Hl' Hla'. exfalso. rewrite Hhx in Hl' by done. case_decide as Hxy.
      + rewrite last_snoc in Hl'. injection Hl' as <-. done.
      + rewrite app_nil_r in Hl'. eapply (not_annphase N NL s t Hi); [| exact Hx | exact Hl' | exact Hla'].
        rewrite Hpc. by intros [].
    - apply (pcok_ret_gen s s' t c y (lv a)); try (by rewrite Htt); try done.
      + intros k. unfold eff. split; intros (x & j & Hx & Hj); exists x, j; split; try done;
          [rewrite (tookat_snoc NL s s' t k x j y _ Hhx Hx) in Hj | rewrite (tookat_snoc NL s s' t k x j y _ Hhx Hx)];
          simpl in *; naive_solver.
      + apply (hm_wloc N NL); done.
  Qed.

  Lemma step_18ok s t c y a tc : inv s → tr t → pc (th s t) = PLH c y (H18 a tc) →
    phys2 (visx (pfence s t) y) = phys2 a →
    inv (setth (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None 0 None))) t
           (with_pc (th s t) (lh_ret (th s t) c y (lv a)))).
  Proof.
    intros Hi Ht Hpc Hph. apply (step_18ok_core (pfence s t) t c y a tc); try done.
    - by apply inv_pfence.
    - apply no_t_pwbs_pfence.
  Qed.
End clean_steps.

Section owner_writes.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation frame := (frame NL).

  Lemma step_26ok s t p town n : inv s → tr t → pc (th s t) = P26 p town →
    let T := th s t in
    let w := LW (an T) (Some (p, t)) n (Some (t, kk T)) in
    phys (visx (pfence s t) (ax T)) = (ao T, None) → h_aba2 s (ax T) w →
    inv (setth (pwrite (pfence s t) (LX (ax T)) (CLoc w)) t (with_pc T (P33 p town))).
  Proof.
    intros Hi Ht Hpc T w Hph Haba. apply (step_26ok_core N NL (pfence s t) t p town n); try done.
    by apply inv_pfence.
  Qed.

  (** The memento is durable once the thread's write-backs are all done. *)
  Lemma mdur_of_mpend s t : inv s → (∀ pw, pw ∈ pwbs s → pw.1.1 ≠ t) → mpend s t →
    lastm s t (λ w, mfail w = false) → mdur s t.
  Proof. intros Hi Hnp [Hin | Hmk] Hl; [by destruct (Hnp _ Hin) | done]. Qed.

  Lemma step_38_core s t p ts : inv s → tr t → (∀ pw, pw ∈ pwbs s → pw.1.1 ≠ t) → pc (th s t) = P38 p ts →
    let T := th s t in
    inv (setth (if decide (phys (visx s (ax T)) = (an T, Some (p, t)))
                then ppwb (pwrite s (LX (ax T)) (CLoc (LW (an T) None 0 None))) t (LX (ax T))
                else ppwb s t (LX (ax T))) t (with_pc T (PCommit true))).
  Proof.
    intros Hi Ht Hnp Hpc T. subst T. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hpar & (i & Hti & Himk) & Hl & Hmp & Ho & Hax).
    assert (Hmd : mdur s t).
    { apply mdur_of_mpend; try done. destruct Hl as (w & ? & ? & ? & _). by exists w. }
    destruct (tookat_locok N NL s t _ _ i Hi Hax Hti) as (a & p' & Ha & Hla & Hlg & _ & _ & Hcur & _ & _).
    destruct (Hcur eq_refl) as (_ & Hlv & Hp'). subst p'.
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    case_decide as Hph.
    - (* the second plain CAS succeeds: a's clean word *)
      assert (la (visx s (ax (th s t))) = Some (p, t)) as Hlv' by (unfold phys in Hph; injection Hph; congruence).
      pose proof (visx_ann s _ _ _ Hlv') as Hlast.
      destruct (vis_own_ann N NL s _ _ _ _ Hi Hax Hlast Hlv') as (_ & _ & _ & _ & Hlvv & _ & Hto).
      assert (Hia : i = pred (length (hx s (ax (th s t))))) by (by destruct (i_once _ _ _ Hi t (kk (th s t)) _ i _ _ Hax Hax Hti Hto)).
      assert (visx s (ax (th s t)) = a) as Hva.
      { apply last_lookup_len in Hlast as [Hl' _]. rewrite <- Hia in Hl'. rewrite Ha in Hl'. by injection Hl' as ->. }
      rewrite Hva in Hlast, Hlv', Hlvv. rewrite <- Hlvv.
      set (s' := setth (ppwb (pwrite s (LX (ax (th s t))) (CLoc (LW (lv a) None 0 None))) t (LX (ax (th s t)))) t
                   (with_pc (th s t) (PCommit true))).
      assert (Hhx : ∀ x, x < NL → hx s' x = hx s x ++ (if decide (x = ax (th s t)) then [LW (lv a) None 0 None] else [])).
      { intros x Hx. unfold s'. rewrite hx_setth. cbn [ppwb]. apply (hx_wloc N NL); done. }
      assert (Htt : th s' t = with_pc (th s t) (PCommit true)) by (unfold s'; by rewrite th_setth, decide_True).
      eapply (inv_clean_write N NL s s' t (ax (th s t)) a p t); try (by rewrite ?Htt); try done.
      + intros u'. unfold s'. rewrite hm_setth, hm_ppwb. apply (hm_wloc N NL); done.
      + intros p' u'. unfold s'. rewrite hh_setth, hh_ppwb. apply (hh_wloc N NL); done.
      + intros pw Hin. unfold s'. rewrite pwbs_setth, pwbs_ppwb. by right.
      + by apply p_pwb_wf, p_write_wf, Hi.
      + unfold nl_ok, s'. rewrite pm_setth. cbn [pm ppwb p_pwb p_mem]. rewrite pwrite_lines. apply Hi.
      + change (ids_ok (pwrite s (LX (ax (th s t))) (CLoc (LW (lv a) None 0 None)))).
        apply ids_ok_pwrite; [done | rewrite Hnl; by apply LX_lt].
      + intros u' Hu'. unfold s'. by rewrite th_setth, decide_False.
      + by left.
      + intros x w p'' Hx Hl' Hla'. exfalso. rewrite Hhx in Hl' by done. case_decide as Hxa.
        * rewrite last_snoc in Hl'. injection Hl' as <-. done.
        * rewrite app_nil_r in Hl'. destruct (vis_own_ann N NL s x w p'' t Hi Hx Hl' Hla') as (_ & _ & _ & Hxa' & _).
          done.
      + unfold pcok. rewrite Htt. cbn [pc with_pc ax own]. split_and!; try done.
        * exists i. split_and!.
          -- rewrite (tookat_snoc NL s s' t _ _ i _ _ Hhx Hax). by left.
          -- rewrite Hhx by done. rewrite decide_True by done. rewrite app_length. simpl.
             pose proof (lookup_lt_Some _ _ _ Ha). lia.
          -- left. exists (length (ids s (LX (ax (th s t)))) + 1). split.
             ++ unfold s'. rewrite pwbs_setth, pwbs_ppwb. apply elem_of_cons. left. f_equal.
                rewrite ids_pwrite by (rewrite Hnl; by apply LX_lt). rewrite decide_True by done.
                rewrite app_length. done.
             ++ assert (length (ids s (LX (ax (th s t)))) = length (hx s (ax (th s t)))) as -> by (unfold hx, hc; by rewrite !fmap_length).
                pose proof (lookup_lt_Some _ _ _ Ha). lia.
        * destruct Hmd as [Hmk (w & Hlw & Hg & Hf)]. split.
          -- unfold s'. rewrite mk_setth, hm_setth, mk_ppwb, hm_ppwb, mk_pwrite, (hm_wloc N NL) by done. done.
          -- exists w. unfold s'. rewrite hm_setth, hm_ppwb, (hm_wloc N NL) by done.
             rewrite th_setth, decide_True by done. done.
        * destruct Hl as (w & Hlw & Hg & Hf & Hmp' & Hts). exists w. unfold s'.
          rewrite hm_setth, hm_ppwb, (hm_wloc N NL) by done. rewrite th_setth, decide_True by done.
          cbn [own with_pc kk]. rewrite Ho, Hmp', Hts. done.
    - (* it fails: someone cleaned the word already *)
      assert (Hnl' : S i < length (hx s (ax (th s t)))).
      { destruct (decide (S i = length (hx s (ax (th s t))))) as [Heq | ?]; [| apply lookup_lt_Some in Ha; lia].
        exfalso. apply Hph. assert (last (hx s (ax (th s t))) = Some a) as Hla'.
        { rewrite last_lookup. by replace (pred (length (hx s (ax (th s t))))) with i by lia. }
        rewrite (visx_last s _ a Hla'). unfold phys. rewrite Hlv, Hla, Hpar. done. }
      pose proof (frame_ppwb NL s t (LX (ax (th s t))) (i_wf _ _ _ Hi)) as Hf.
      assert (Hf' : frame s (setth (ppwb s t (LX (ax (th s t)))) t (with_pc (th s t) (PCommit true))) t)
        by (apply frame_local; try done; by left).
      eapply (inv_local N NL); [done | done | exact Hf | done | done | done | done | done | by left | | |].
      + right. destruct Hl as (w & Hlw & Hg & Hf0 & Hmp' & Hts). exists w. cbn [own with_pc].
        split_and!; try done. by rewrite Ho, Hmp', Hts.
      + intros x w p' Hx Hlw Hla'. exfalso.
        destruct (vis_own_ann N NL s x w p' t Hi Hx Hlw Hla') as (_ & _ & _ & -> & _ & _ & Hto).
        destruct (i_once _ _ _ Hi t (kk (th s t)) _ i _ _ Hax Hax Hti Hto) as [_ ->]. lia.
      + unfold pcok. rewrite ?th_setth, ?decide_True by done. cbn [pc with_pc ax own]. split_and!; try done.
        * exists i. split_and!; [by rewrite (fr_tookat Hf') | by rewrite (fr_hx Hf') |].
          left. exists (length (ids s (LX (ax (th s t))))). split.
          -- rewrite pwbs_setth, pwbs_ppwb. by left.
          -- assert (length (ids s (LX (ax (th s t)))) = length (hx s (ax (th s t)))) as -> by (unfold hx, hc; by rewrite !fmap_length).
             lia.
        * by apply (fr_mdur Hf').
        * destruct Hl as (w & Hlw & Hg & Hf0 & Hmp' & Hts). apply (fr_lastm Hf'). exists w.
          split_and!; try done. by rewrite Ho, Hmp', Hts.
  Qed.
End owner_writes.

Section help_write.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation frame := (frame NL).

  Lemma step_13ok_core s t c y a tc thv p u k : inv s → tr t → (∀ pw, pw ∈ pwbs s → pw.1.1 ≠ t) →
    pc (th s t) = PLH c y (H13 a tc thv) → la a = Some (p, u) → lg a = Some (u, k) →
    hval (hh s p u) = thv →
    inv (setth (ppwb (pwrite s (LHl p u) (CHelp (HW tc (Some k)))) t (LHl p u)) t
           (with_pc (th s t) (PLH c y (H18 a tc)))).
  Proof.
    intros Hi Ht Hnp Hpc Hla Hlg Hthv. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre [Hy (i & p' & u' & k' & Ha & Hla' & Hlg' & Hab & Htc & Hlow & Hhi & Hlt & Hcov)]].
    rewrite Hla in Hla'. injection Hla' as <- <-. rewrite Hlg in Hlg'. injection Hlg' as <-.
    assert (Himk : i < mk s (LX y)) by (destruct Hcov as [(n & Hin & _) | ?]; [by destruct (Hnp _ Hin) | done]).
    assert (Hu : tr u) by (by eapply (held_tr N NL s y i a p u)).
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    set (w := HW tc (Some k)).
    set (s' := setth (ppwb (pwrite s (LHl p u) (CHelp w)) t (LHl p u)) t (with_pc (th s t) (PLH c y (H18 a tc)))).
    assert (Hhh : ∀ p' u', hh s' p' u' = hh s p' u' ++ (if decide (p' = p ∧ u' = u) then [w] else [])).
    { intros p' u'. unfold s'. rewrite hh_setth, hh_ppwb. apply (hh_wh N NL); [done | done | apply Hu]. }
    assert (Hhx : ∀ x, x < NL → hx s' x = hx s x).
    { intros x Hx. unfold s'. rewrite hx_setth, hx_ppwb. apply (hx_wh N NL); [done | done | apply Hu | done]. }
    assert (Hhm : ∀ u', hm s' u' = hm s u').
    { intros u'. unfold s'. rewrite hm_setth, hm_ppwb. apply (hm_wh N NL); [done | done | apply Hu]. }
    assert (Hmk : ∀ L, mk s' L = mk s L) by done.
    assert (Hpw : pwbs s' = (t, LHl p u, S (length (hh s p u))) :: pwbs s).
    { unfold s'. rewrite pwbs_setth, pwbs_ppwb. f_equal. f_equal.
      rewrite ids_pwrite by (unfold nl_ok in Hnl; rewrite Hnl; apply LH_lt; unfold tr in Hu; lia).
      rewrite decide_True by done. rewrite app_length.
      unfold hh, hc. rewrite !fmap_length. simpl. lia. }
    assert (Htt : th s' t = with_pc (th s t) (PLH c y (H18 a tc))) by (unfold s'; by rewrite th_setth, decide_True).
    assert (Hth : ∀ u', u' ≠ t → th s' u' = th s u') by (intros u' Hu'; unfold s'; by rewrite th_setth, decide_False).
    assert (Hkk : ∀ u', kk (th s' u') = kk (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hfl : ∀ u', fl (th s' u') = fl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hofl : ∀ u', ofl (th s' u') = ofl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hres : ∀ u', res (th s' u') = res (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Hpar' : ∀ u', par (th s' u') = par (th s u')) by (intros u'; unfold par; by rewrite Hofl).
    assert (Hax' : ∀ u', ax (th s' u') = ax (th s u') ∧ an (th s' u') = an (th s u'))
      by (intros u'; destruct (decide (u' = t)) as [-> |]; [by rewrite Htt | by rewrite Hth]).
    assert (Htk : ∀ u' k' x i', x < NL → tookat s' u' k' x i' ↔ tookat s u' k' x i')
      by (intros; unfold tookat; by rewrite Hhx).
    assert (Hef : ∀ u' k', eff s' u' k' ↔ eff s u' k').
    { intros u' k'. unfold eff. split; intros (x & j & Hx & Hj); exists x, j; split; try done; by apply Htk. }
    assert (Hwf' : p_wf (pm s')) by (apply p_pwb_wf, p_write_wf, Hi).
    assert (Hhinc : incr (hh s p u)) by (by destruct (i_help _ _ _ Hi p u Hu)).
    assert (Hhmk : ∀ p' u', hmk s' p' u' = hmk s p' u').
    { intros p' u'. unfold hmk. rewrite Hhh, Hmk. case_decide; [| by rewrite app_nil_r].
      rewrite take_app_le; [done |]. destruct (i_wf _ _ _ Hi) as (_ & Hle & _). specialize (Hle (LHl p' u')).
      unfold mk, hh, hc, ids. by rewrite !fmap_length. }
    split.
    - done.
    - unfold nl_ok, s'. rewrite pm_setth. cbn [pm ppwb p_pwb p_mem]. rewrite pwrite_lines. apply Hi.
    - change (ids_ok (pwrite s (LHl p u) (CHelp w))).
      apply ids_ok_pwrite; [done | unfold nl_ok in Hnl; rewrite Hnl; apply LH_lt; unfold tr in Hu; lia].
    - intros u' Hu'. rewrite Hfl, Hofl, Hres, Hkk. apply (i_clock _ _ _ Hi u' Hu').
    - intros u' w' Hu'. rewrite Hhm. apply (i_mclock _ _ _ Hi u' w' Hu').
    - intros p' u' w' Hu'. rewrite Hhh. intros [Hin | Hin]%elem_of_app; [by apply (i_hclock _ _ _ Hi p' u' w' Hu') |].
      case_decide; [| by apply elem_of_nil in Hin]. apply elem_of_list_singleton in Hin as ->. simpl. lia.
    - intros x j w0 Hx. rewrite Hhx by done. intros Hw0.
      destruct (i_loc _ _ _ Hi x j w0 Hx Hw0) as [? | (p' & u' & k'' & Hla0 & Hlg0 & Hu' & Hk & Hnext & Hcur & Hold)];
        [by left | right].
      exists p', u', k''. rewrite Hkk, Hmk, Hpar', Hhx by done. destruct (Hax' u') as [-> ->]. split_and!; done.
    - intros u' k' x j x' j' Hx Hx'. rewrite !Htk by done. by apply (i_once _ _ _ Hi).
    - intros u' k' Hu'. rewrite Hkk, Hres, Hef. by apply (i_res _ _ _ Hi).
    - intros u' j w' Hu'. rewrite Hhm. intros Hw'.
      destruct (i_mmt _ _ _ Hi u' j w' Hu' Hw') as [(Hg & Hlt' & Hl & Hok & Hfa) | ?];
        [left | right; by rewrite Hkk, Hfl, Hofl].
      rewrite Hkk, Hfl, Hpar', Hhm. split_and!; try done.
      + intros Hm. destruct (Hok Hm) as [? (x & j' & Hx & Hj & Hjm)]. split; [done |].
        exists x, j'. rewrite Htk by done. split_and!; [done | done | by rewrite Hmk].
      + intros Hm. rewrite Hef. by apply Hfa.
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut]; [rewrite Htt | rewrite Hth by done];
        (destruct (i_own _ _ _ Hi _ Hu') as [? | ?]; [by left | right]; unfold lastm in *; by rewrite Hhm, Hkk).
    - intros p' u' Hu'. destruct (i_help _ _ _ Hi p' u' Hu') as [Hinc Hw].
      assert (Hold : ∀ w', w' ∈ hh s p' u' → ∃ k', hg w' = Some k' ∧
          (∃ x j a, x < NL ∧ hx s' x !! j = Some a ∧ la a = Some (p', u') ∧ lg a = Some (u', k') ∧ j < mk s' (LX x)) ∧
          (k' = kk (th s' u') ∨ (hts w' < fl (th s' u') ∧ (p' = par (th s' u') → hts w' ≤ (ofl (th s' u')).2)))).
      { intros w' Hin. destruct (Hw w' Hin) as (k' & Hk' & (x & j & b & Hx & Hb & Hlab & Hlgb & Hj) & Hb').
        exists k'. split_and!; try done; [exists x, j, b; by rewrite Hhx, Hmk | by rewrite Hkk, Hfl, Hofl, Hpar']. }
      unfold helpok. rewrite Hhh. case_decide as Hpu; [destruct Hpu as [-> ->] | rewrite app_nil_r; by split].
      split.
      + apply incr_snoc; [done |]. simpl. rewrite Hthv. done.
      + intros w' [Hin | ->%elem_of_list_singleton]%elem_of_app; [by apply Hold |].
        exists k. split_and!; [done | | ].
        * exists y, i, a. rewrite Hhx, Hmk by done. done.
        * rewrite Hkk, Hfl, Hofl, Hpar'. simpl. destruct Hhi as [-> | ?]; [by left | by right].
    - intros u' x j Hu' Hx. rewrite Hkk, Htk, Hhx by done. intros Hti Hlt'.
      destruct (i_cl _ _ _ Hi u' x j Hu' Hx Hti Hlt') as [(Hm & w1 & Hl & Hg & Hf') | Hh]; [left | right].
      + split; [by rewrite Hmk, Hhm |]. exists w1. by rewrite Hhm, Hkk.
      + by rewrite Hofl, Hpar', Hhmk.
    - intros x w0 p' u' Hx. rewrite Hhx by done. intros Hl Hla0.
      destruct (i_vis _ _ _ Hi x w0 p' u' Hx Hl Hla0) as [Hg Hph]. rewrite Hkk. split; [done |].
      destruct (decide (u' = t)) as [-> | Hut]; [| by rewrite Hth].
      rewrite Hpc in Hph. done.
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut].
      + unfold pcok. rewrite Htt. cbn [pc with_pc]. split.
        * apply (lhpre_gen N NL s s' t c y); try (by rewrite Htt); try done; by rewrite Hhm.
        * split; [done |]. cbn [held]. exists i, p, u, k. rewrite Hhx by done. split_and!; try done.
          -- rewrite Hkk, Hofl. done.
          -- unfold hi in *. rewrite Hkk, Hfl, Hofl, Hpar'. done.
          -- left. exists (S (length (hh s p u))). rewrite Hpw. split; [by left |].
             rewrite Hhh, decide_True by done. rewrite take_ge by (rewrite app_length; simpl; lia).
             rewrite hval_snoc. simpl. lia.
      + refine (ex_pcok _ Hi Hu' (i_pc _ _ _ Hi u' Hu')).
        split; try done.
        * intros x Hx. rewrite Hhx by done. done.
        * intros k' x j Hx. by rewrite Htk.
        * intros p' u'' _. rewrite Hhh. by eexists.
        * intros pw Hin. rewrite Hpw. by right.
        * by apply Hth.
        * apply Hi.
        * intros p' u'' _. unfold vish. rewrite Hhh. case_decide as Hpu; [destruct Hpu as [-> ->] | by rewrite app_nil_r].
          rewrite hval_snoc. simpl. rewrite Hthv. lia.
        * intros c' y' h' b b' Hpcu Hh Hl Hpb. destruct (decide (y' < NL)) as [Hy' | Hy'].
          -- by rewrite Hhx in Hl.
          -- exfalso. pose proof (i_pc _ _ _ Hi u' Hu') as Hpu. unfold pcok in Hpu. rewrite Hpcu in Hpu.
             destruct Hpu as [_ [? _]]. lia.
  Qed.
End help_write.

Section mmt_write.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).

  (** A step of thread [t] that writes its memento [m] (L30 or L35), with no
      memento write of its current invocation before. *)
  Lemma inv_mmt_write s s' t m : inv s → tr t → nokm s t → own (th s t) = ofl (th s t) →
    (∀ x, x < NL → hx s' x = hx s x) → (∀ u, u ≠ t → hm s' u = hm s u) → hm s' t = hm s t ++ [m] →
    (∀ p u, tr u → hh s' p u = hh s p u) → (∀ L, mk s' L = mk s L) → (∀ pw, pw ∈ pwbs s → pw ∈ pwbs s') →
    p_wf (pm s') → nl_ok s' → ids_ok s' → clock s' = S (clock s) →
    (∀ u, u ≠ t → th s' u = th s u) →
    kk (th s' t) = kk (th s t) → fl (th s' t) = fl (th s t) → ofl (th s' t) = ofl (th s t) →
    res (th s' t) = res (th s t) → ax (th s' t) = ax (th s t) → an (th s' t) = an (th s t) →
    own (th s' t) = own (th s t) →
    mg m = Some (kk (th s t)) → mts m = clock s →
    (mfail m = false → mpar m = par (th s t) ∧ durable s t (kk (th s t))) →
    (mfail m = true → ¬ eff s t (kk (th s t))) →
    (annphase (pc (th s t)) → annphase (pc (th s' t))) →
    pcok s' t → inv s'.
  Proof.
    intros Hi Ht Hn Ho Hhx Hhm Hhmt Hhh Hmk Hpw Hwf Hnl Hids Hclk Hth Hk Hf Hof Hr Hax Han Hown Hg Hts Hok Hfa Hph Hpct.
    assert (Hkk : ∀ u', kk (th s' u') = kk (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hfl : ∀ u', fl (th s' u') = fl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hofl : ∀ u', ofl (th s' u') = ofl (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hres : ∀ u', res (th s' u') = res (th s u')) by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Hpar' : ∀ u', par (th s' u') = par (th s u')) by (intros u'; unfold par; by rewrite Hofl).
    assert (Hax' : ∀ u', ax (th s' u') = ax (th s u') ∧ an (th s' u') = an (th s u'))
      by (intros u'; destruct (decide (u' = t)) as [-> |]; [done | by rewrite Hth]).
    assert (Htk : ∀ u' k' x i', x < NL → tookat s' u' k' x i' ↔ tookat s u' k' x i')
      by (intros; unfold tookat; by rewrite Hhx).
    assert (Hef : ∀ u' k', eff s' u' k' ↔ eff s u' k').
    { intros u' k'. unfold eff. split; intros (x & j & Hx & Hj); exists x, j; split; try done; by apply Htk. }
    assert (Hdur : ∀ u' k', durable s u' k' → durable s' u' k').
    { intros u' k' (x & j & Hx & Hj & Hjm). exists x, j. rewrite Htk, Hmk by done. done. }
    destruct (i_clock _ _ _ Hi t Ht) as (Hflc & Hofl_fl & _).
    split; try done.
    - intros u' Hu'. rewrite Hfl, Hofl, Hres, Hkk, Hclk. destruct (i_clock _ _ _ Hi u' Hu') as (? & ? & ?).
      split_and!; [lia | done | done].
    - intros u' w' Hu'. rewrite Hclk. destruct (decide (u' = t)) as [-> | Hut]; [rewrite Hhmt | rewrite Hhm by done].
      + intros [Hin | ->%elem_of_list_singleton]%elem_of_app; [pose proof (i_mclock _ _ _ Hi t w' Ht Hin); lia | lia].
      + intros Hin. pose proof (i_mclock _ _ _ Hi u' w' Hu' Hin). lia.
    - intros p u w' Hu'. rewrite Hhh, Hclk by done. intros Hin. pose proof (i_hclock _ _ _ Hi p u w' Hu' Hin). lia.
    - intros x j w0 Hx. rewrite Hhx by done. intros Hw0.
      destruct (i_loc _ _ _ Hi x j w0 Hx Hw0) as [? | (p' & u' & k'' & Hla0 & Hlg0 & Hu' & Hk' & Hnext & Hcur & Hold)];
        [by left | right].
      exists p', u', k''. rewrite Hkk, Hmk, Hpar', Hhx by done. destruct (Hax' u') as [-> ->]. split_and!; done.
    - intros u' k' x j x' j' Hx Hx'. rewrite !Htk by done. by apply (i_once _ _ _ Hi).
    - intros u' k' Hu'. rewrite Hkk, Hres, Hef. by apply (i_res _ _ _ Hi).
    - intros u' j w' Hu'. destruct (decide (u' = t)) as [-> | Hut].
      + rewrite Hhmt. intros Hw'. apply lookup_snoc_cases in Hw' as [Hw' | [-> ->]].
        * destruct (i_mmt _ _ _ Hi t j w' Ht Hw') as [(Hg' & _) | (Hk' & Hle & Hle')].
          -- exfalso. apply (Hn w'); [by eapply elem_of_list_lookup_2 | done].
          -- right. rewrite Hkk, Hfl, Hofl. done.
        * left. rewrite Hkk, Hfl, Hpar', Hhmt, app_length. simpl. split_and!; [done | lia | lia | |].
          -- intros Hm. destruct (Hok Hm). split; [done | by apply Hdur].
          -- intros Hm. rewrite Hef. by apply Hfa.
      + rewrite Hhm by done. intros Hw'.
        destruct (i_mmt _ _ _ Hi u' j w' Hu' Hw') as [(Hg' & Hlt' & Hl & Hok' & Hfa') | ?];
          [left | right; by rewrite Hkk, Hfl, Hofl].
        rewrite Hkk, Hfl, Hpar', Hhm by done. split_and!; try done.
        * intros Hm. destruct (Hok' Hm). split; [done | by apply Hdur].
        * intros Hm. rewrite Hef. by apply Hfa'.
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut].
      + left. by rewrite Hown, Hof.
      + rewrite Hth by done. destruct (i_own _ _ _ Hi u' Hu') as [? | ?]; [by left | right].
        unfold lastm in *. by rewrite Hhm, Hkk.
    - intros p u Hu. destruct (i_help _ _ _ Hi p u Hu) as [Hinc Hw]. unfold helpok. rewrite Hhh by done. split; [done |].
      intros w' Hin. destruct (Hw w' Hin) as (k' & Hk' & (x & j & b & Hx & Hb & Hlab & Hlgb & Hj) & Hb').
      exists k'. split_and!; try done; [exists x, j, b; by rewrite Hhx, Hmk | by rewrite Hkk, Hfl, Hofl, Hpar'].
    - intros u' x j Hu' Hx. rewrite Hkk, Htk, Hhx by done. intros Hti Hlt'.
      destruct (i_cl _ _ _ Hi u' x j Hu' Hx Hti Hlt') as [(Hm & w1 & Hl & Hg' & Hf') | Hh]; [left | right].
      + assert (u' ≠ t) as Hut.
        { intros ->. apply (Hn w1); [| done]. apply last_lookup_len in Hl as [Hl _]. by eapply elem_of_list_lookup_2. }
        split; [by rewrite Hmk, Hhm |]. exists w1. by rewrite Hhm, Hkk.
      + rewrite Hofl, Hpar'. unfold hmk. by rewrite Hhh, Hmk.
    - intros x w0 p' u' Hx. rewrite Hhx by done. intros Hl Hla0.
      destruct (i_vis _ _ _ Hi x w0 p' u' Hx Hl Hla0) as [Hg' Hph']. rewrite Hkk. split; [done |].
      destruct (decide (u' = t)) as [-> | Hut]; [by apply Hph | by rewrite Hth].
    - intros u' Hu'. destruct (decide (u' = t)) as [-> | Hut]; [done |].
      refine (ex_pcok _ Hi Hu' (i_pc _ _ _ Hi u' Hu')).
      split; try done.
      + intros x Hx. rewrite Hhx by done. done.
      + intros k' x j Hx. by rewrite Htk.
      + by apply Hhm.
      + intros p u Hu''. by rewrite Hhh.
      + rewrite Hclk. lia.
      + by apply Hth.
      + apply Hi.
      + intros p u Hu''. unfold vish. by rewrite Hhh.
      + intros c y h b b' Hpcu Hh Hl Hpb. destruct (decide (y < NL)) as [Hy | Hy].
        * by rewrite Hhx in Hl.
        * exfalso. pose proof (i_pc _ _ _ Hi u' Hu') as Hpu. unfold pcok in Hpu. rewrite Hpcu in Hpu.
          destruct Hpu as [_ [? _]]. lia.
  Qed.
End mmt_write.

Section mmt_steps.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation pcok := (pcok N NL).

  Lemma step_fail s t p town : inv s → tr t → pc (th s t) = PFail p town →
    inv (setth (tick (pwrite s (LMl t) (CMmt (MW false true (clock s) (Some (kk (th s t))))))) t
           (with_pc (th s t) PFailF)).
  Proof.
    intros Hi Ht Hpc. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hpar & Htown & (Hne & Hn & Ho) & Hax).
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    assert (Htn : t ≤ N) by (destruct Ht; lia).
    set (m := MW false true (clock s) (Some (kk (th s t)))).
    set (s' := setth (tick (pwrite s (LMl t) (CMmt m))) t (with_pc (th s t) PFailF)).
    assert (Hhmt : hm s' t = hm s t ++ [m]).
    { change (hm (pwrite s (LMl t) (CMmt m)) t = hm s t ++ [m]). rewrite (hm_wm N NL) by done. by rewrite decide_True. }
    assert (Htt : th s' t = with_pc (th s t) PFailF) by (unfold s'; by rewrite th_setth, decide_True).
    apply (inv_mmt_write N NL s s' t m); try done; try (by rewrite Htt).
    - intros x Hx. change (hx (pwrite s (LMl t) (CMmt m)) x = hx s x). by apply (hx_wm N NL).
    - intros u Hu. change (hm (pwrite s (LMl t) (CMmt m)) u = hm s u). rewrite (hm_wm N NL) by done.
      by rewrite decide_False, app_nil_r.
    - intros p' u Hu. change (hh (pwrite s (LMl t) (CMmt m)) p' u = hh s p' u).
      apply (hh_wm N NL); [done | done | done | destruct Hu; lia].
    - by apply p_write_wf, Hi.
    - unfold nl_ok, s'. rewrite pm_setth. change (length (m_lines (p_mem (pm (pwrite s (LMl t) (CMmt m))))) = nlines N NL).
      rewrite pwrite_lines. apply Hi.
    - change (ids_ok (pwrite s (LMl t) (CMmt m))).
      apply ids_ok_pwrite; [done | unfold nl_ok in Hnl; rewrite Hnl; by apply LM_lt].
    - intros u Hu. unfold s'. by rewrite th_setth, decide_False.
    - rewrite Htt, Hpc. by intros [].
    - unfold pcok. rewrite Htt. cbn [pc with_pc]. split_and!; try done.
      + rewrite Htt. cbn [kk with_pc]. intros (x & j & Hx & w & Hw & Hg). apply Hne. exists x, j.
        split; [done |]. exists w. split; [| done].
        change (hx (pwrite s (LMl t) (CMmt m)) x !! j = Some w) in Hw. by rewrite (hx_wm N NL) in Hw.
      + exists m. rewrite Hhmt, last_snoc. rewrite Htt. done.
      + rewrite Htt. done.
      + rewrite Htt. done.
  Qed.

  Lemma step_34 s t p town : inv s → tr t → pc (th s t) = P34 p town →
    let s1 := pwrite s (LMl t) (CMmt (MW p false (clock s) (Some (kk (th s t))))) in
    inv (setth (tick (if c35 fixed then ppwb s1 t (LMl t) else s1)) t (with_pc (th s t) (P36 p (clock s)))).
  Proof.
    intros Hi Ht Hpc s1. cbn [c35 fixed]. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as (Hpar & Htown & (i & Hti & Himk) & Hn & Ho & Hax).
    pose proof (i_nl _ _ _ Hi) as Hnl. pose proof (i_ids _ _ _ Hi) as Hids.
    assert (Htn : t ≤ N) by (destruct Ht; lia).
    set (m := MW p false (clock s) (Some (kk (th s t)))) in *.
    set (s' := setth (tick (ppwb s1 t (LMl t))) t (with_pc (th s t) (P36 p (clock s)))).
    assert (Hhmt : hm s' t = hm s t ++ [m]).
    { change (hm (pwrite s (LMl t) (CMmt m)) t = hm s t ++ [m]). rewrite (hm_wm N NL) by done. by rewrite decide_True. }
    assert (Htt : th s' t = with_pc (th s t) (P36 p (clock s))) by (unfold s'; by rewrite th_setth, decide_True).
    apply (inv_mmt_write N NL s s' t m); try done; try (by rewrite Htt).
    - intros x Hx. change (hx (pwrite s (LMl t) (CMmt m)) x = hx s x). by apply (hx_wm N NL).
    - intros u Hu. change (hm (pwrite s (LMl t) (CMmt m)) u = hm s u). rewrite (hm_wm N NL) by done.
      by rewrite decide_False, app_nil_r.
    - intros p' u Hu. change (hh (pwrite s (LMl t) (CMmt m)) p' u = hh s p' u).
      apply (hh_wm N NL); [done | done | done | destruct Hu; lia].
    - intros pw Hin. unfold s'. rewrite pwbs_setth. change (pw ∈ pwbs (ppwb s1 t (LMl t))). rewrite pwbs_ppwb. by right.
    - by apply p_pwb_wf, p_write_wf, Hi.
    - unfold nl_ok, s'. rewrite pm_setth. change (length (m_lines (p_mem (pm (pwrite s (LMl t) (CMmt m))))) = nlines N NL).
      rewrite pwrite_lines. apply Hi.
    - change (ids_ok (pwrite s (LMl t) (CMmt m))).
      apply ids_ok_pwrite; [done | unfold nl_ok in Hnl; rewrite Hnl; by apply LM_lt].
    - intros u Hu. unfold s'. by rewrite th_setth, decide_False.
    - intros _. split; [done |]. exists (ax (th s t)), i. done.
    - unfold pcok. rewrite Htt. cbn [pc with_pc ax own kk]. split_and!; try done.
      + exists i. split; [| done].
        destruct Hti as (w & Hw & Hg). exists w. split; [| done].
        change (hx (pwrite s (LMl t) (CMmt m)) (ax (th s t)) !! i = Some w). by rewrite (hx_wm N NL).
      + exists m. rewrite Hhmt, last_snoc. rewrite Htt. done.
      + left. unfold s'. rewrite pwbs_setth. change ((t, LMl t, length (hm s' t)) ∈ pwbs (ppwb s1 t (LMl t))).
        rewrite pwbs_ppwb. apply elem_of_cons. left. rewrite Hhmt. f_equal. unfold s1.
        rewrite ids_pwrite by (unfold nl_ok in Hnl; rewrite Hnl; by apply LM_lt). rewrite decide_True by done.
        rewrite !app_length. unfold hm, hc. rewrite !fmap_length. done.
  Qed.
End mmt_steps.

Section commit.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation mpend := (mpend N NL).
  Notation hmk := (hmk NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).
  Notation locok := (locok N).
  Notation mmtok := (mmtok N NL).
  Notation helpok := (helpok NL).
  Notation idleok := (idleok N NL).
  Notation pre26 := (pre26 N NL).
  Notation failok := (failok N NL).

  (** Another thread's program counter after the commit of thread [t]: its
      registers and the memory are the same; a helper of [t]'s words keeps
      its bounds (given as [Hhelp]). *)
  Lemma cm_pcok s t T' u : u ≠ t → inv s → tr u →
    (∀ c y h a i p k, pc (th s u) = PLH c y h → held h = Some a → hx s y !! i = Some a →
       la a = Some (p, t) → lg a = Some (t, k) → lhok s u y h →
       match h with
       | H4 _ | H11 => True
       | H5 _ tc => k = kk T' → (ofl T').2 < tc
       | H10 _ tc | H13 _ tc _ | H18 _ tc =>
           (k = kk T' → (ofl T').2 < tc) ∧ (k = kk T' ∨ (tc < fl T' ∧ (p = par T' → tc ≤ (ofl T').2)))
       end) →
    pcok s u → pcok (setth (tick s) t T') u.
  Proof.
    intros Hut Hi Hu Hhelp Hp. set (s' := setth (tick s) t T').
    assert (Hthu : th s' u = th s u) by (unfold s'; by rewrite th_setth, decide_False).
    assert (Hlh : ∀ c y h, pc (th s u) = PLH c y h → lhok s u y h → lhok s' u y h).
    { intros c y h Hpc Hl0. pose proof Hl0 as [Hy Hh]. split; [done |]. destruct (held h) as [a |] eqn:Eh; [| done].
      destruct Hh as (i & p & u' & k & Ha & Hla & Hlg & Hab & Hst). exists i, p, u', k. split_and!; try done.
      destruct (decide (u' = t)) as [-> | Hu't].
      - specialize (Hhelp c y h a i p k Hpc Eh Ha Hla Hlg Hl0).
        unfold s', hi, lcov, hcov. destruct h; cbn [held] in Eh; try discriminate; injection Eh as <-; cbn [held] in *;
          cbn [clock setth tick]; rewrite ?th_setth, ?decide_True by done; try done.
        + destruct Hst as [? _]. split; [lia | done].
        + destruct Hst as (? & _). destruct Hhelp. split_and!; [lia | done | done].
        + destruct Hst as (? & _ & _ & ? & ?). destruct Hhelp. split_and!; [lia | done | done | done | done].
        + destruct Hst as (? & _ & _ & ? & ?). destruct Hhelp. split_and!; [lia | done | done | done | done].
      - unfold s', hi, lcov, hcov. destruct h; cbn [held] in Eh; try discriminate; injection Eh as <-; cbn [held] in *;
          cbn [clock setth tick]; rewrite ?th_setth, ?decide_False by done; try done.
        + destruct Hst as [? ?]. split; [lia | done].
        + destruct Hst as (? & ? & ?). split_and!; [lia | done | done].
        + destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | done | done | done].
        + destruct Hst as (? & ? & ? & ? & ?). split_and!; [lia | done | done | done | done]. }
    unfold pcok in Hp |- *. rewrite Hthu.
    destruct (pc (th s u)) as [| p town | c y h | p town | | p town | p town | p ts | p ts | [|] | | p town | y v] eqn:Epc;
      try (unfold pre26, idleok, failok, mdur, mpend, nokm, lastm, lcov, eff, tookat in *; rewrite ?Hthu; exact Hp).
    destruct Hp as [Hpre Hl]. split; [| by eapply Hlh].
    apply (lhpre_gen N NL s s' u c y); try done; by rewrite Hthu.
  Qed.
End commit.

Section commit_step.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation lhok := (lhok NL).
  Notation pcok := (pcok N NL).

  Lemma step_commit_core s t r : inv s → tr t → (∀ pw, pw ∈ pwbs s → pw.1.1 ≠ t) → pc (th s t) = PCommit r →
    let T := th s t in
    inv (setth (tick s) t (TS PIdle (S (kk T)) (ax T) (ao T) (an T) (clock s) (own T) (own T) (res T ++ [r]))).
  Proof.
    intros Hi Ht Hnp Hpc T. subst T.
    set (K := kk (th s t)).
    set (T' := TS PIdle (S K) (ax (th s t)) (ao (th s t)) (an (th s t)) (clock s) (own (th s t)) (own (th s t))
                 (res (th s t) ++ [r])).
    set (s' := setth (tick s) t T').
    assert (Htt : th s' t = T') by (unfold s'; by rewrite th_setth, decide_True).
    assert (Hth : ∀ u, u ≠ t → th s' u = th s u) by (intros u Hu; unfold s'; by rewrite th_setth, decide_False).
    pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct (i_clock _ _ _ Hi t Ht) as (Hflc & Hofl_fl & Hlen_res).
    (* what the commit records *)
    assert (Hr : (r = true ∧ ∃ i0 wl, tookat s t K (ax (th s t)) i0 ∧ S i0 < mk s (LX (ax (th s t))) ∧
                   last (hm s t) = Some wl ∧ mg wl = Some K ∧ mfail wl = false ∧ mpar wl = par (th s t) ∧
                   fl (th s t) < mts wl ∧ own (th s t) = (mpar wl, mts wl)) ∨
                 (r = false ∧ ¬ eff s t K ∧ own (th s t) = ofl (th s t) ∧ lastm s t (λ w, mfail w = true))).
    { destruct r.
      - left. destruct Hp as ((i0 & Hti & Hlen & Hcov) & (Hmk & wl & Hlw & Hg & Hf) & (wl' & Hlw' & _ & Ho) & Hax).
        rewrite Hlw in Hlw'. injection Hlw' as <-.
        destruct (last_lookup_len _ _ Hlw) as [Hwl _].
        destruct (i_mmt _ _ _ Hi t _ wl Ht Hwl) as [(_ & Hlt & _ & Hok & _) | (Hk & _)]; [| specialize (Hk _ Hg); lia].
        destruct (Hok Hf) as [Hpar _].
        split; [done |]. exists i0, wl. split_and!; try done.
        destruct Hcov as [(n & Hin & _) | ?]; [by destruct (Hnp _ Hin) | done].
      - right. by destruct Hp as (? & ? & ? & _). }
    assert (Hax : ax (th s t) < NL).
    { apply (pcok_ax N NL s t (pcok_of N NL s t Hi Ht)). rewrite Hpc. split; [done | intros; done]. }
    assert (Hown_lt : (own (th s t)).2 < clock s).
    { destruct (i_own _ _ _ Hi t Ht) as [-> | (w & Hlw & _ & _ & ->)]; [lia |].
      apply (i_mclock _ _ _ Hi t w Ht). apply last_lookup_len in Hlw as [Hw _]. by eapply elem_of_list_lookup_2. }
    assert (Htk_le : ∀ k x i, x < NL → tookat s t k x i → k ≤ K).
    { intros k x i Hx Hti. by destruct (tookat_locok N NL s t k x i Hi Hx Hti) as (_ & _ & _ & _ & _ & _ & ? & _). }
    split.
    - apply Hi.
    - apply Hi.
    - apply Hi.
    - intros u Hu. destruct (decide (u = t)) as [-> | Hut].
      + rewrite Htt. cbn. rewrite app_length, Hlen_res. simpl. split_and!; lia.
      + rewrite Hth by done. destruct (i_clock _ _ _ Hi u Hu) as (? & ? & ?). cbn [clock s' setth tick]. split_and!; lia.
    - intros u w Hu Hw. cbn [clock s' setth tick]. pose proof (i_mclock _ _ _ Hi u w Hu Hw). lia.
    - intros p u w Hu Hw. cbn [clock s' setth tick]. pose proof (i_hclock _ _ _ Hi p u w Hu Hw). lia.
    - intros x i w Hx Hw. destruct (i_loc _ _ _ Hi x i w Hx Hw) as [? | (p & u & k & Hla & Hlg & Hu & Hk & Hnext & Hcur & Hold)];
        [by left | right].
      exists p, u, k. destruct (decide (u = t)) as [-> | Hut].
      + rewrite Htt. cbn [kk ax an T' par ofl]. split_and!; try done; [lia | intros ->; lia |].
        intros Hlt. destruct (decide (k = K)) as [-> | Hne]; [| apply Hold; lia].
        destruct Hr as [(_ & i0 & wl & Hti0 & Hmk0 & _) | (_ & Hne & _ & _)].
        * destruct (i_once _ _ _ Hi t K x i (ax (th s t)) i0 Hx Hax (ex_intro _ w (conj Hw Hlg)) Hti0) as [-> ->]. done.
        * exfalso. apply Hne. exists x, i. split; [done |]. by exists w.
      + rewrite Hth by done. split_and!; done.
    - intros u k x i x' i' Hx Hx'. by apply (i_once _ _ _ Hi).
    - intros u k Hu. destruct (decide (u = t)) as [-> | Hut].
      + rewrite Htt. cbn [kk res T']. intros Hk. destruct (decide (k = K)) as [-> | Hne].
        * rewrite lookup_app_r by lia. rewrite Hlen_res, Nat.sub_diag. simpl.
          destruct Hr as [(-> & i0 & wl & Hti0 & _) | (-> & Hne & _ & _)].
          -- split; [intros _; exists (ax (th s t)), i0 | done]. done.
          -- split; [discriminate | done].
        * rewrite lookup_app_l by lia. apply (i_res _ _ _ Hi t k Ht). lia.
      + rewrite Hth by done. by apply (i_res _ _ _ Hi).
    - intros u i w Hu Hw. destruct (decide (u = t)) as [-> | Hut].
      + right. rewrite Htt. cbn [kk fl ofl T'].
        destruct (i_mmt _ _ _ Hi t i w Ht Hw) as [(Hg & Hlt & Hlast & Hok & Hf) | (Hk & Hle & Hle')].
        * split_and!.
          -- intros k Hgk. rewrite Hg in Hgk. injection Hgk as <-. lia.
          -- pose proof (i_mclock _ _ _ Hi t w Ht (elem_of_list_lookup_2 _ _ _ Hw)). lia.
          -- intros Hm. assert (last (hm s t) = Some w) as Hlw by (rewrite last_lookup; by rewrite <- Hlast).
             destruct Hr as [(_ & i0 & wl & _ & _ & Hlw' & _ & _ & _ & _ & ->) | (_ & Hne & _ & (w' & Hlw' & _ & Hfail))].
             ++ rewrite Hlw in Hlw'. injection Hlw' as <-. simpl. lia.
             ++ exfalso. rewrite Hlw in Hlw'. injection Hlw' as <-. congruence.
        * split_and!.
          -- intros k Hgk. specialize (Hk k Hgk). lia.
          -- lia.
          -- intros Hm. specialize (Hle' Hm).
             destruct Hr as [(_ & i0 & wl & _ & _ & _ & _ & _ & _ & Hlt & ->) | (_ & _ & -> & _)]; simpl; lia.
      + unfold mmtok. rewrite Hth by done. by apply (i_mmt _ _ _ Hi).
    - intros u Hu. destruct (decide (u = t)) as [-> | Hut]; [left; by rewrite Htt |].
      rewrite Hth by done. destruct (i_own _ _ _ Hi u Hu) as [? | ?]; [by left | right].
      unfold lastm in *. by rewrite Hth.
    - intros p u Hu. destruct (i_help _ _ _ Hi p u Hu) as [Hinc Hw]. split; [done |].
      intros w Hin. destruct (Hw w Hin) as (k & Hk & Hha & Hb). exists k. split_and!; try done.
      destruct (decide (u = t)) as [-> | Hut]; [| by rewrite Hth].
      rewrite Htt. cbn [kk fl ofl T']. unfold par. cbn [ofl T'].
      right. split; [by apply (i_hclock _ _ _ Hi p t w Ht) |].
      destruct Hha as (x & j & a & Hx & Ha & Hla & Hlg & Hj).
      destruct Hr as [(_ & i0 & wl & _ & _ & _ & _ & _ & Hmp & Hlt & Hown) | (_ & Hne & Hown & _)].
      + rewrite Hown. simpl. intros Hp'. destruct Hb as [-> | (Hlt' & _)].
        * exfalso. destruct (tookat_locok N NL s t K x j Hi Hx (ex_intro _ a (conj Ha Hlg))) as (a' & p' & Ha' & Hla' & _ & _ & _ & Hcur & _).
          rewrite Ha in Ha'. injection Ha' as <-. rewrite Hla in Hla'. injection Hla' as <-.
          destruct (Hcur eq_refl) as (_ & _ & Hpp). rewrite Hp', Hmp in Hpp. unfold par in Hpp.
          destruct (ofl (th s t)).1; discriminate.
        * lia.
      + rewrite Hown. destruct Hb as [-> | (Hlt' & Hb)].
        * exfalso. apply Hne. exists x, j. split; [done |]. by exists a.
        * done.
    - intros u x i Hu Hx. destruct (decide (u = t)) as [-> | Hut].
      + rewrite Htt. cbn [kk T']. intros Hti. specialize (Htk_le _ _ _ Hx Hti). lia.
      + rewrite Hth by done. intros Hti Hlt. destruct (i_cl _ _ _ Hi u x i Hu Hx Hti Hlt) as [Hm | Hh]; [left | right].
        * destruct Hm as [Hm Hl]. split; [done |]. unfold lastm in *. by rewrite Hth.
        * exact Hh.
    - intros x w p u Hx Hl Hla. destruct (i_vis _ _ _ Hi x w p u Hx Hl Hla) as [Hg Hph].
      destruct (decide (u = t)) as [-> | Hut]; [rewrite Hpc in Hph; done |]. rewrite Hth by done. done.
    - intros u Hu. destruct (decide (u = t)) as [-> | Hut].
      + unfold pcok. rewrite Htt. cbn [pc T']. unfold idleok. rewrite Htt. cbn [kk own ofl T']. split_and!; try done.
        * intros (x & i & Hx & Hti). specialize (Htk_le _ _ _ Hx Hti). lia.
        * unfold nokm. rewrite Htt. cbn [kk T']. intros w Hin Hg. apply elem_of_list_lookup_1 in Hin as [i Hw].
          destruct (i_mmt _ _ _ Hi t i w Ht Hw) as [(Hg' & _) | (Hk & _)]; [rewrite Hg in Hg'; injection Hg' as Hg'; lia |].
          specialize (Hk _ Hg). lia.
      + apply (cm_pcok N NL s t T' u Hut Hi Hu); [| by apply (i_pc _ _ _ Hi)].
        intros c y h a i p k Hpcu Hh Ha Hla Hlg [Hy Hhl]. rewrite Hh in Hhl.
        destruct Hhl as (i' & p' & u' & k' & Ha' & Hla' & Hlg' & _ & Hst).
        rewrite Hla in Hla'. injection Hla' as <- <-. rewrite Hlg in Hlg'. injection Hlg' as <-.
        assert (Hkle : k ≤ K) by (apply (Htk_le k y i); [done | by exists a]).
        cbn [kk ofl fl T']. unfold par. cbn [ofl T'].
        destruct h as [a0 | a0 tc | a0 tc | a0 tc thv | a0 tc | ]; cbn [held] in Hh; try done; injection Hh as <-;
          try (intros; lia).
        1: destruct Hst as (Htc & _ & Hhi).
        2-3: destruct Hst as (Htc & _ & Hhi & _).
        all: split; [intros; lia | right; split; [done |]].
        all: destruct Hr as [(_ & i0 & wl & Hti0 & _ & _ & _ & _ & Hmp & Hlt & Hown) | (_ & Hne & Hown & _)];
               rewrite Hown; simpl.
        all: destruct Hhi as [Hk | (Hlt' & Hb)].
        all: try (intros; lia).
        all: try (exfalso; apply Hne; exists y, i; split; [done |]; exists a0; by rewrite Hk in Hlg).
        all: try (intros Hp'; apply Hb; exact Hp').
        all: intros Hp'; exfalso; subst k.
        all: destruct (tookat_locok N NL s t K y i Hi Hy (ex_intro _ a0 (conj Ha Hlg))) as
               (a' & p' & Ha'' & Hla'' & _ & _ & _ & Hcur & _);
             rewrite Ha in Ha''; injection Ha'' as <-; rewrite Hla in Hla''; injection Hla'' as <-;
             destruct (Hcur eq_refl) as (_ & _ & Hpp).
        all: rewrite Hpp, Hmp in Hp'; destruct (par (th s t)); discriminate.
  Qed.

  Lemma step_commit s t r : inv s → tr t → pc (th s t) = PCommit r →
    let T := th s t in
    inv (setth (tick (pfence s t)) t (TS PIdle (S (kk T)) (ax T) (ao T) (an T) (clock s) (own T) (own T) (res T ++ [r]))).
  Proof.
    intros Hi Ht Hpc T. apply (step_commit_core (pfence s t) t r); [by apply inv_pfence | done | | done].
    apply no_t_pwbs_pfence.
  Qed.
End commit_step.

Section crash_step.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation vism := (vism N NL).
  Notation vish := (vish NL).
  Notation nl_ok := (nl_ok N NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation nokm := (nokm N NL).
  Notation lastm := (lastm N NL).
  Notation mdur := (mdur N NL).
  Notation hmk := (hmk NL).
  Notation pcok := (pcok N NL).
  Notation reinit := (reinit N NL).

  Lemma step_crash s keep f : inv s → p_crash_ok (pm s) keep →
    (∀ u, tr u → f u = reinit s keep u) → (∀ u, ¬ tr u → f u = th s u) →
    inv (St (crash_pm (pm s) keep) (wt s) (clock s) f).
  Proof.
    intros Hi Hok Hf Hf'. set (s' := St (crash_pm (pm s) keep) (wt s) (clock s) f).
    pose proof (i_nl _ _ _ Hi) as Hnl. unfold nl_ok in Hnl.
    assert (Hids : ∀ L, ids s' L = take (keep L) (ids s L)).
    { intros L. unfold ids, s'. cbn [pm crash_pm p_mem]. rewrite crash_hist. by rewrite fmap_take. }
    assert (Hhc : ∀ L, hc s' L = take (keep L) (hc s L)).
    { intros L. unfold hc. rewrite Hids. rewrite fmap_take. done. }
    assert (Hhx : ∀ x, hx s' x = take (keep (LX x)) (hx s x)) by (intros; unfold hx; by rewrite Hhc, fmap_take).
    assert (Hhm : ∀ u, hm s' u = take (keep (LMl u)) (hm s u)) by (intros; unfold hm; by rewrite Hhc, fmap_take).
    assert (Hhh : ∀ p u, hh s' p u = take (keep (LHl p u)) (hh s p u)) by (intros; unfold hh; by rewrite Hhc, fmap_take).
    assert (Hmk : ∀ L, L < nlines N NL → mk s' L = keep L).
    { intros L HL. unfold mk, s'. cbn [pm crash_pm p_mem]. apply crash_mark. by rewrite Hnl. }
    assert (Hkeep : ∀ L, L < nlines N NL → mk s L ≤ keep L ∧ keep L ≤ length (hc s L)).
    { intros L HL. rewrite <- Hnl in HL. specialize (Hok L HL). unfold hc, ids. rewrite !fmap_length. done. }
    assert (Hth : ∀ u, tr u → th s' u = reinit s keep u) by done.
    assert (Hkk : ∀ u, tr u → kk (th s' u) = kk (th s u)) by (intros u Hu; by rewrite Hth).
    assert (Hfl : ∀ u, tr u → fl (th s' u) = fl (th s u)) by (intros u Hu; by rewrite Hth).
    assert (Hofl : ∀ u, tr u → ofl (th s' u) = ofl (th s u)) by (intros u Hu; by rewrite Hth).
    assert (Hres : ∀ u, tr u → res (th s' u) = res (th s u)) by (intros u Hu; by rewrite Hth).
    assert (Hpar' : ∀ u, tr u → par (th s' u) = par (th s u)) by (intros u Hu; unfold par; by rewrite Hofl).
    assert (Hax' : ∀ u, tr u → ax (th s' u) = ax (th s u) ∧ an (th s' u) = an (th s u)) by (intros u Hu; by rewrite Hth).
    assert (Hlk : ∀ {A} (l : list A) n i a, take n l !! i = Some a → l !! i = Some a ∧ i < n).
    { intros A l n i a H. by apply lookup_take_Some. }
    assert (Htk : ∀ u k x i, tookat s' u k x i → tookat s u k x i ∧ i < keep (LX x)).
    { intros u k x i (w & Hw & Hg). rewrite Hhx in Hw. apply Hlk in Hw as [Hw Hi']. split; [by exists w | done]. }
    assert (Hxm : ∀ x i, x < NL → i < mk s (LX x) → hx s' x !! i = hx s x !! i).
    { intros x i Hx Hi'. rewrite Hhx. apply lookup_take. pose proof (Hkeep (LX x) (LX_lt N NL x Hx)). lia. }
    assert (Hef : ∀ u k, eff s' u k → eff s u k).
    { intros u k (x & i & Hx & Hti). apply Htk in Hti as [? _]. by exists x, i. }
    assert (Hdur : ∀ u k, durable s u k → durable s' u k).
    { intros u k (x & i & Hx & (w & Hw & Hg) & Hi'). exists x, i. split; [done |]. split.
      - exists w. by rewrite Hxm.
      - rewrite Hmk by (by apply LX_lt). pose proof (Hkeep (LX x) (LX_lt N NL x Hx)). lia. }
    assert (Hhm' : ∀ u i w, hm s' u !! i = Some w → hm s u !! i = Some w ∧ i < keep (LMl u)).
    { intros u i w Hw. rewrite Hhm in Hw. by apply Hlk. }
    assert (Hvm : ∀ u, tr u → vism s' u = vism (St (crash_pm (pm s) keep) (wt s) (clock s) (th s)) u) by done.
    (* OWN after the crash *)
    assert (Hown' : ∀ u, tr u → own (th s' u) = own_init (th s u) (vism s' u)) by (intros u Hu; by rewrite Hth).
    split.
    - by apply crash_pm_wf.
    - unfold nl_ok, s'. cbn [pm crash_pm p_mem]. by rewrite crash_lines.
    - intros L n. rewrite Hids. intros Hn. apply (i_ids _ _ _ Hi L n). apply elem_of_take in Hn as (j & Hj & _).
      by eapply elem_of_list_lookup_2.
    - intros u Hu. rewrite Hfl, Hofl, Hres, Hkk by done. apply (i_clock _ _ _ Hi u Hu).
    - intros u w Hu. rewrite Hhm. intros Hw. apply (i_mclock _ _ _ Hi u w Hu). apply elem_of_take in Hw as (j & Hj & _).
      by eapply elem_of_list_lookup_2.
    - intros p u w Hu. rewrite Hhh. intros Hw. apply (i_hclock _ _ _ Hi p u w Hu). apply elem_of_take in Hw as (j & Hj & _).
      by eapply elem_of_list_lookup_2.
    - intros x i w Hx. rewrite Hhx. intros Hw. apply Hlk in Hw as [Hw Hik].
      destruct (i_loc _ _ _ Hi x i w Hx Hw) as [? | (p & u & k & Hla & Hlg & Hu & Hk & Hnext & Hcur & Hold)]; [by left | right].
      exists p, u, k. rewrite Hkk, Hpar', Hmk by (done || by apply LX_lt). destruct (Hax' u Hu) as [-> ->].
      split_and!; try done.
      + intros w' Hw'. rewrite Hhx in Hw'. apply Hlk in Hw' as [Hw' _]. by apply Hnext.
      + intros Hlt. specialize (Hold Hlt). pose proof (Hkeep (LX x) (LX_lt N NL x Hx)). lia.
    - intros u k x i x' i' Hx Hx' Ht1 Ht2. apply Htk in Ht1 as [Ht1 _]. apply Htk in Ht2 as [Ht2 _].
      by apply (i_once _ _ _ Hi u k x i x' i').
    - intros u k Hu. rewrite Hkk, Hres by done. intros Hk. rewrite (i_res _ _ _ Hi u k Hu Hk). split; [| apply Hef].
      intros (x & i & Hx & Hti). destruct (tookat_locok N NL s u k x i Hi Hx Hti) as (w & p & Hw & _ & Hg & _ & _ & _ & Hold & _).
      exists x, i. split; [done |]. exists w. rewrite Hxm; [done | done |]. specialize (Hold Hk). lia.
    - intros u i w Hu Hw. apply Hhm' in Hw as [Hw Hik].
      destruct (i_mmt _ _ _ Hi u i w Hu Hw) as [(Hg & Hlt & Hlast & Hok' & Hfa) | (Hk & Hle & Hle')].
      + left. rewrite Hkk, Hfl, Hpar' by done. split_and!; try done.
        * rewrite Hhm, take_length. pose proof (Hkeep (LMl u) (LM_lt N NL u ltac:(destruct Hu; lia))).
          unfold hm in *. rewrite fmap_length in *. lia.
        * intros Hm. destruct (Hok' Hm). split; [done | by apply Hdur].
        * intros Hm He. apply (Hfa Hm). by apply Hef.
      + right. by rewrite Hkk, Hfl, Hofl.
    - intros u Hu. rewrite Hown', Hofl by done. unfold own_init.
      destruct (negb (mfail (vism s' u)) && bool_decide ((ofl (th s u)).2 < mts (vism s' u))) eqn:E; [right | by left].
      apply andb_true_iff in E as [Hnf Hlt]. apply negb_true_iff in Hnf. apply bool_decide_eq_true in Hlt.
      assert (Hl : last (hm s' u) = Some (vism s' u)) by (apply vism_last; lia).
      exists (vism s' u). split_and!; try done.
      destruct (last_lookup_len _ _ Hl) as [Hw _]. apply Hhm' in Hw as [Hw _].
      destruct (i_mmt _ _ _ Hi u _ _ Hu Hw) as [(Hg & _) | (_ & _ & Hle')]; [by rewrite Hkk | specialize (Hle' Hnf); lia].
    - intros p u Hu. destruct (i_help _ _ _ Hi p u Hu) as [Hinc Hw]. unfold helpok. rewrite Hhh. split; [by apply incr_take |].
      intros w Hin. apply elem_of_take in Hin as (j & Hj & _). apply elem_of_list_lookup_2 in Hj.
      destruct (Hw w Hj) as (k & Hk & (x & j' & a & Hx & Ha & Hla & Hlg & Hj') & Hb). exists k. split_and!; try done.
      + exists x, j', a. rewrite Hxm, Hmk by (done || by apply LX_lt). split_and!; try done.
        pose proof (Hkeep (LX x) (LX_lt N NL x Hx)). lia.
      + by rewrite Hkk, Hfl, Hofl, Hpar'.
    - intros u x i Hu Hx. rewrite Hkk by done. intros Hti Hlt. apply Htk in Hti as [Hti _].
      rewrite Hhx, take_length in Hlt.
      destruct (i_cl _ _ _ Hi u x i Hu Hx Hti ltac:(lia)) as [(Hm & w1 & Hl & Hg & Hf1) | Hh]; [left | right].
      + assert (Hu' : LMl u < nlines N NL) by (apply LM_lt; destruct Hu; lia).
        pose proof (Hkeep _ Hu') as [Hk1 Hk2].
        assert (length (hm s u) = length (hc s (LMl u))) as Hlh by (unfold hm; by rewrite fmap_length).
        assert (keep (LMl u) = length (hm s u)) as Hkl by lia.
        split.
        * rewrite Hmk, Hhm, take_length by done. lia.
        * exists w1. rewrite Hhm, Hkk by done. rewrite take_ge by lia. done.
      + rewrite Hofl, Hpar' by done. eapply Nat.lt_le_trans; [exact Hh |]. unfold hmk.
        rewrite Hhh, Hmk by (apply LH_lt; destruct Hu; lia). rewrite take_take.
        apply hval_take_mono; [by destruct (i_help _ _ _ Hi (par (th s u)) u Hu) |].
        pose proof (Hkeep (LHl (par (th s u)) u) (LH_lt N NL _ u ltac:(destruct Hu; lia))). lia.
    - intros x w p u Hx Hl Hla. rewrite Hhx in Hl.
      destruct (last_lookup_len _ _ Hl) as [Hw Hne]. rewrite take_length in Hw, Hne.
      apply Hlk in Hw as [Hw _].
      destruct (i_loc _ _ _ Hi x _ w Hx Hw) as [[? _] | (p' & u' & k & Hla' & Hlg & Hu & Hk & _ & _ & Hold)]; [congruence |].
      rewrite Hla in Hla'. injection Hla' as <- <-.
      assert (k = kk (th s u)) as ->.
      { destruct (decide (k < kk (th s u))) as [Hlt | ?]; [| lia]. specialize (Hold Hlt).
        pose proof (Hkeep (LX x) (LX_lt N NL x Hx)).
        assert (length (hx s x) = length (hc s (LX x))) by (unfold hx; by rewrite fmap_length). lia. }
      rewrite Hkk by done. split; [done |]. rewrite Hth by done. unfold reinit. cbn [pc with_pc with_own].
      pose proof (i_pc _ _ _ Hi u Hu) as Hp. unfold pcok in Hp.
      assert (Heff : eff s u (kk (th s u))) by (exists x, (pred (keep (LX x) `min` length (hx s x))); split; [done | by exists w]).
      destruct (pc (th s u)) as [| | [] | | | | | | | | | |]; try done; cbn [crash_pc]; try done.
      + by destruct Hp as (? & _).
      + by destruct Hp as [(? & _) _].
      + by destruct Hp as [(? & _) _].
    - intros u Hu. unfold pcok. rewrite Hth by done. unfold reinit. cbn [pc with_pc with_own].
      pose proof (i_pc _ _ _ Hi u Hu) as Hp.
      destruct (pc (th s u)) as [| | [] | | | | | | | | | |] eqn:E; cbn [crash_pc];
        try (apply (pcok_ax N NL s u Hp); rewrite E; done).
      all: assert (Hid : idleok N NL s u) by (unfold pcok in Hp; rewrite E in Hp; first [exact Hp | exact (proj1 Hp)]).
      all: destruct Hid as (Hne & Hn & Ho).
      all: unfold idleok, nokm; rewrite ?Hth by done; unfold reinit; cbn [kk own ofl with_pc with_own]; split_and!.
      all: try (intros He; apply Hne; by apply Hef).
      all: try (intros w Hin; rewrite Hhm in Hin; apply elem_of_take in Hin as (j & Hj & _); apply (Hn w);
                by eapply elem_of_list_lookup_2).
      all: replace (vism (St (crash_pm (pm s) keep) (wt s) (clock s) (th s)) u) with (vism s' u) by done.
      all: unfold own_init.
      all: destruct (negb (mfail (vism s' u)) && bool_decide ((ofl (th s u)).2 < mts (vism s' u))) eqn:E'; [| done].
      all: exfalso; apply andb_true_iff in E' as [Hnf Hlt]; apply negb_true_iff in Hnf; apply bool_decide_eq_true in Hlt.
      all: assert (Hl : last (hm s' u) = Some (vism s' u)) by (apply vism_last; lia).
      all: destruct (last_lookup_len _ _ Hl) as [Hw _]; apply Hhm' in Hw as [Hw _].
      all: destruct (i_mmt _ _ _ Hi u _ _ Hu Hw) as [(Hg & _) | (_ & _ & Hle')];
             [apply (Hn (vism s' u)); [by eapply elem_of_list_lookup_2 | done] | specialize (Hle' Hnf); lia].
  Qed.
End crash_step.

(** ** The theorems *)
Section theorems.
  Context (N NL : nat).
  Notation tr := (tr N).
  Notation LMl := (LMl N NL).
  Notation LHl := (LHl NL).
  Notation hm := (hm N NL).
  Notation hh := (hh NL).
  Notation inv := (inv N NL).
  Notation eff := (eff NL).
  Notation durable := (durable NL).
  Notation pcok := (pcok N NL).
  Notation step := (step N NL fixed h_aba).

  Lemma ids_init L : ids (init N NL) L = [].
  Proof.
    unfold ids, init, line_hist. cbn [pm pmem_empty p_mem mem_empty m_lines].
    destruct (replicate (nlines N NL) [] !! L) as [l |] eqn:E; simpl; [| done].
    apply lookup_replicate in E as [-> _]. done.
  Qed.

  Lemma inv_init : inv (init N NL).
  Proof.
    assert (Hhc : ∀ L, hc (init N NL) L = []) by (intros; unfold hc; by rewrite ids_init).
    assert (Hhx : ∀ x, hx (init N NL) x = []) by (intros; unfold hx; by rewrite Hhc).
    assert (Hhm : ∀ u, hm (init N NL) u = []) by (intros; unfold hm; by rewrite Hhc).
    assert (Hhh : ∀ p u, hh (init N NL) p u = []) by (intros; unfold hh; by rewrite Hhc).
    assert (Hne : ∀ u k, ¬ eff (init N NL) u k).
    { intros u k (x & i & _ & w & Hw & _). by rewrite Hhx in Hw. }
    split.
    - apply pmem_empty_wf.
    - unfold nl_ok. cbn. by rewrite replicate_length.
    - intros L n. rewrite ids_init. intros Hn. by apply elem_of_nil in Hn.
    - intros u Hu. cbn. lia.
    - intros u w Hu. rewrite Hhm. intros Hin. by apply elem_of_nil in Hin.
    - intros p u w Hu. rewrite Hhh. intros Hin. by apply elem_of_nil in Hin.
    - intros x i w Hx. by rewrite Hhx.
    - intros u k x i x' i' _ _ (w & Hw & _). by rewrite Hhx in Hw.
    - intros u k Hu. cbn. lia.
    - intros u i w Hu. by rewrite Hhm.
    - intros u Hu. by left.
    - intros p u Hu. unfold helpok. rewrite Hhh. split; [split; [intros ?; done | intros ? Hin; by apply elem_of_nil in Hin] |].
      intros w Hin. by apply elem_of_nil in Hin.
    - intros u x i Hu Hx (w & Hw & _). by rewrite Hhx in Hw.
    - intros x w p u Hx. by rewrite Hhx.
    - intros u Hu. unfold pcok. cbn. split_and!; [apply Hne | | done]. unfold nokm. intros w. rewrite Hhm. intros Hin. by apply elem_of_nil in Hin.
  Qed.

  Lemma step_13ok s t c y a tc thv : inv s → tr t → pc (th s t) = PLH c y (H13 a tc thv) →
    hval (hh (pfence s t) (match la a with Some (p, _) => p | None => false end)
                          (match la a with Some (_, u) => u | None => 0 end)) = thv →
    inv (setth (ppwb (pwrite (pfence s t) (hline NL a) (CHelp (HW tc (htag a)))) t (hline NL a)) t
           (with_pc (th s t) (PLH c y (H18 a tc)))).
  Proof.
    intros Hi Ht Hpc Hthv. pose proof (pcok_of N NL s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [_ [Hy (i & p & u & k & Ha & Hla & Hlg & _)]].
    rewrite Hla in Hthv. unfold hline, htag. rewrite Hla, Hlg.
    apply (step_13ok_core N NL (pfence s t) t c y a tc thv p u k); try done.
    - by apply inv_pfence.
    - apply no_t_pwbs_pfence.
  Qed.

  Lemma step_38 s t p ts : inv s → tr t → pc (th s t) = P38 p ts →
    let T := th s t in
    let s1 := if c38f fixed then pfence s t else s in
    let s2 := if decide (phys (visx s1 (ax T)) = (an T, Some (p, t)))
              then pwrite s1 (LX (ax T)) (CLoc (LW (an T) None 0 None)) else s1 in
    inv (setth (if c38wb fixed then ppwb s2 t (LX (ax T)) else s2) t (with_pc T (PCommit true))).
  Proof.
    intros Hi Ht Hpc T s1 s2. cbn [c38f c38wb fixed] in *.
    pose proof (step_38_core N NL (pfence s t) t p ts (inv_pfence N NL s t Hi Ht) Ht
                  (no_t_pwbs_pfence s t) Hpc) as H. cbn zeta in H.
    subst s1 s2. destruct (decide _); done.
  Qed.

  (** The fixed protocol on either location form ([fixedw]), in runs whose
      first plain CASes satisfy [h_aba2]. *)
  Lemma step_inv_w tw s s' : inv s → stepg N NL (fixedw tw) h_aba2 s s' → inv s'.
  Proof.
    intros Hi Hstep. destruct Hstep.
    - by apply step_start.
    - by apply step_startrec.
    - by apply step_load.
    - by eapply step_loadret.
    - by apply step_26ok.
    - by apply step_26fail.
    - by eapply step_h4.
    - by eapply step_h5clean.
    - by eapply step_h5chg.
    - by eapply step_h5same.
    - eapply step_h_to11; [done | done | apply frame_refl, Hi | done | done].
    - by eapply step_h10go.
    - by eapply step_h11.
    - by eapply step_13ok.
    - eapply step_h_to11; [done | done | apply frame_pfence, Hi | done | done].
    - by eapply step_18ok.
    - by eapply step_h18fail.
    - by eapply step_fail.
    - by eapply step_failf.
    - by eapply step_33.
    - by eapply step_34.
    - by eapply step_36.
    - by eapply step_38.
    - by eapply step_commit.
    - by eapply step_rec4.
    - exfalso. by eapply (step_rec5 N NL s t).
    - by eapply step_rec6.
    - by eapply step_rec7.
    - by eapply step_rech.
    - by eapply step_rec8.
    - by eapply step_rec9.
    - by eapply step_tcrash.
    - by eapply step_crash.
  Qed.

  Lemma reachable_inv_w tw s : rtc (stepg N NL (fixedw tw) h_aba2) (init N NL) s → inv s.
  Proof.
    intros Hr. assert (∀ s1 s2, rtc (stepg N NL (fixedw tw) h_aba2) s1 s2 → inv s1 → inv s2) as Hgen.
    { intros s1 s2 H. induction H as [| s1 s1' s2 Hs _ IH]; [done |]. intros Hi. apply IH. by eapply step_inv_w. }
    apply (Hgen (init N NL)); [done | apply inv_init].
  Qed.

  Lemma step_inv s s' : inv s → step s s' → inv s'.
  Proof. intros Hi Hs. apply (step_inv_w false s s' Hi). eapply step_mono; [| exact Hs]. apply h_aba_aba2. Qed.

  Lemma reachable_inv s : reachable N NL fixed h_aba s → inv s.
  Proof. intros Hr. apply (reachable_inv_w false). eapply rtc_step_mono; [| exact Hr]. apply h_aba_aba2. Qed.

  (** ** Detectability *)

  (** (a) The result each committed invocation returned -- from its normal
      execution or from the recovery path, after any number of full-system
      and thread crashes -- is OK iff its first plain CAS took effect (is in
      its location's history as the crashes left it), ERR iff it did not;
      and an effect returned OK is under its line's mark.  Stated at every
      reachable state: no later crash undoes a returned effect or brings an
      ERR's back. *)
  (** [detcas_px_detectable]'s statement on any state of the invariant:
      the two-word model's [detcas_px2_detectable] stands on it too. *)
  Lemma inv_detectable s t k : inv s → tr t → k < kk (th s t) →
    (res (th s t) !! k = Some true ↔ eff s t k) ∧ (res (th s t) !! k = Some false ↔ ¬ eff s t k) ∧
    (eff s t k → durable s t k).
  Proof.
    intros Hi Ht Hk.
    destruct (i_clock _ _ _ Hi t Ht) as (_ & _ & Hlen).
    destruct (lookup_lt_is_Some_2 (res (th s t)) k) as [r Hr']; [lia |].
    pose proof (i_res _ _ _ Hi t k Ht Hk) as Hiff. rewrite Hr' in Hiff |- *.
    split_and!; [done | |].
    - destruct r; split; intros H.
      + done.
      + exfalso. apply H. by apply Hiff.
      + intros He. apply Hiff in He. done.
      + done.
    - intros (x & i & Hx & Hti). exists x, i. split_and!; try done.
      destruct (tookat_locok N NL s t k x i Hi Hx Hti) as (_ & _ & _ & _ & _ & _ & _ & _ & Hold & _).
      specialize (Hold Hk). lia.
  Qed.

  Theorem detcas_px_detectable s t k : reachable N NL fixed h_aba s → tr t → k < kk (th s t) →
    (res (th s t) !! k = Some true ↔ eff s t k) ∧ (res (th s t) !! k = Some false ↔ ¬ eff s t k) ∧
    (eff s t k → durable s t k).
  Proof. intros Hr. apply inv_detectable, (reachable_inv s Hr). Qed.

  (** (b)-(d) below, each stated once over [inv] (the two-word model,
      [DetCasPxTwoWord.v], derives its theorems from these too). *)
  Lemma inv_first_cas_not_taken s t p town : inv s → tr t →
    pc (th s t) = P26 p town → ¬ eff s t (kk (th s t)).
  Proof.
    intros Hi Ht Hpc. pose proof (i_pc _ _ _ Hi t Ht) as Hp. unfold pcok in Hp.
    rewrite Hpc in Hp. by destruct Hp as (_ & _ & (? & _) & _).
  Qed.

  Lemma inv_no_future_effect s t k : inv s → tr t → eff s t k → k ≤ kk (th s t).
  Proof.
    intros Hi Ht (x & i & Hx & Hti).
    by destruct (tookat_locok N NL s t k x i Hi Hx Hti) as (_ & _ & _ & _ & _ & _ & ? & _).
  Qed.

  Lemma inv_returns s s' t r : inv s → inv s' → tr t →
    res (th s' t) = res (th s t) ++ [r] →
    (r = true ↔ eff s' t (kk (th s t))) ∧
    (r = true → ∃ x i, x < NL ∧ tookat s' t (kk (th s t)) x i ∧
                      ∀ keep, p_crash_ok (pm s') keep → i < keep (LX x)).
  Proof.
    intros Hi Hi' Ht Hres.
    destruct (i_clock _ _ _ Hi t Ht) as (_ & _ & Hl). destruct (i_clock _ _ _ Hi' t Ht) as (_ & _ & Hl').
    rewrite Hres, app_length in Hl'. simpl in Hl'.
    destruct (inv_detectable s' t (kk (th s t)) Hi' Ht ltac:(lia)) as (Hok & Herr & Hdur).
    assert (res (th s' t) !! kk (th s t) = Some r) as Hk.
    { rewrite Hres, lookup_app_r by lia. rewrite Hl, Nat.sub_diag. done. }
    rewrite Hk in Hok. split.
    - split; [intros ->; by apply Hok | intros He; destruct r; [done | exfalso]].
      rewrite Hk in Herr. by apply Herr.
    - intros ->. destruct (Hdur (proj1 Hok eq_refl)) as (x & i & Hx & Hti & Hi0). exists x, i.
      split_and!; [done | done |]. intros keep Hkeep. specialize (Hkeep (LX x)).
      rewrite (i_nl _ _ _ Hi') in Hkeep. specialize (Hkeep (LX_lt N NL x Hx)). unfold mk in Hi0. lia.
  Qed.

  (** (b) An invocation's first plain CAS is at most once in the histories. *)
  Theorem detcas_px_at_most_once s t k x i x' i' : reachable N NL fixed h_aba s → x < NL → x' < NL →
    tookat s t k x i → tookat s t k x' i' → x = x' ∧ i = i'.
  Proof. intros Hr. by apply (i_once _ _ _ (reachable_inv s Hr)). Qed.

  (** (c) The first plain CAS (L26) runs only while its invocation has not
      taken effect -- in normal execution or resumed there by recovery (⑨) --
      and no invocation not yet started has an effect: so an invocation
      takes effect at most once over the whole run. *)
  Theorem detcas_px_first_cas_not_taken s t p town : reachable N NL fixed h_aba s → tr t →
    pc (th s t) = P26 p town → ¬ eff s t (kk (th s t)).
  Proof. intros Hr. apply inv_first_cas_not_taken, (reachable_inv s Hr). Qed.

  Theorem detcas_px_no_future_effect s t k : reachable N NL fixed h_aba s → tr t → eff s t k → k ≤ kk (th s t).
  Proof. intros Hr. apply inv_no_future_effect, (reachable_inv s Hr). Qed.

  (** (d) When a thread returns (the step that commits its invocation, from
      the normal path or from recovery), the result is the one the
      invocation took effect with, and an OK's effect is in every crash
      image Px86 allows from then on. *)
  Theorem detcas_px_returns s s' t r : reachable N NL fixed h_aba s → step s s' → tr t →
    res (th s' t) = res (th s t) ++ [r] →
    (r = true ↔ eff s' t (kk (th s t))) ∧
    (r = true → ∃ x i, x < NL ∧ tookat s' t (kk (th s t)) x i ∧
                      ∀ keep, p_crash_ok (pm s') keep → i < keep (LX x)).
  Proof.
    intros Hr Hs. apply inv_returns; [apply (reachable_inv s Hr) |].
    apply reachable_inv. eapply rtc_r; [exact Hr | exact Hs].
  Qed.
End theorems.
