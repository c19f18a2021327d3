(** * Memento's detectable CAS on Px86's line-granular persistence

    A model of the detectable CAS of the seed paper (seed 001, Cho, Jeon,
    Kang, §3, Algorithms 1 and 2: the two plain CASes, the memento
    checkpoint with its timestamp, the flushes L33, L35 and L38, LOADHELP's
    helping through HELP[p][tid], and recovery L9–L25) as the code runs it
    ([impl/perdure-memento/src/cas.rs]: [DetectableCasAtomic::cas],
    [second_cas], [load_help], [load]; [runtime.rs]: the root operation's
    commit, [Runtime::open]'s OWN), on the persistence layer of
    [Core/PxPersist.v]: every PM word (a location, a memento, a HELP entry)
    is a cache line holding the sequence of its visible writes and a mark;
    a write persists for sure only through a [pwb] its thread later fences
    (a locked CAS is a fence, as on x86), or by an arbitrary eviction; a
    full crash keeps any prefix of each line at least as long as its mark
    ([p_crash_ok]), so every image Px86 allows.  It supersedes, for
    persistence, the immediate-persistence model [DetCas.v].

    Status of this file: the model ([step]), its switches for the seed as
    written and the mutants ([config]), and the invariant of the fixed
    protocol ([inv]) with the lemmas for the steps that write nothing.  The
    refutations of the as-written steps are in [DetCasPxBugs.v]. *)
From Coq Require Import Lia.
From perdure.Core Require Import Px86 PxPersist.
From stdpp Require Import base list relations.

(** ** Words *)

(** A location's word: its value, its annotation (parity, tid) if any (the
    physical word, [phys]), and a ghost tag, the (thread, invocation) of the
    first plain CAS that wrote it. *)
Record lword := LW { lv : nat; la : option (bool * nat); lg : option (nat * nat) }.
(** A CAS memento: parity, failure flag, timestamp; ghost: the invocation. *)
Record mword := MW { mpar : bool; mfail : bool; mts : nat; mg : option nat }.
(** A HELP entry: a timestamp; ghost: the invocation of its owner it helped. *)
Record hword := HW { hts : nat; hg : option nat }.
Inductive cont := CLoc (w : lword) | CMmt (w : mword) | CHelp (w : hword).

Definition lw0 : lword := LW 0 None None.
Definition mw0 : mword := MW false false 0 None.
Definition hw0 : hword := HW 0 None.
Definition phys (w : lword) : nat * option (bool * nat) := (lv w, la w).

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
}.
Definition fixed : config := Cfg true true true true true true.

(** LOADHELP's continuation and position. *)
Inductive lhk := KL27 (p : bool) (town : nat) | KL17 | KLoad.
Inductive lhpc :=
  | H4 (a : lword) | H5 (a : lword) (tc : nat) | H10 (a : lword) (tc : nat)
  | H13 (a : lword) (tc thv : nat) | H18 (a : lword) (tc : nat) | H11.
Inductive tpc :=
  | PIdle | P26 (p : bool) (town : nat) | PLH (c : lhk) (y : nat) (h : lhpc)
  | PFail (p : bool) (town : nat) | PFailF | P33 (p : bool) (town : nat)
  | P34 (p : bool) (town : nat) | P36 (p : bool) (ts : nat) | P38 (p : bool) (ts : nat)
  | PCommit (r : bool) | PRec | PRecH (p : bool) (town : nat).

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
    match p with PIdle | PLH KLoad _ _ => PIdle | _ => PRec end.
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
  Definition lh_ret (T : tstate) (c : lhk) (v : nat) : tpc :=
    match c with
    | KL27 p town => if decide (v = ao T) then P26 p town else PFail p town
    | KL17 => PCommit false
    | KLoad => PIdle
    end.
  Definition lh_enter (T : tstate) (c : lhk) (y : nat) (w : lword) : tpc :=
    match la w with None => lh_ret T c (lv w) | Some _ => PLH c y (H4 w) end.
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
      LOADHELP; not detectable, its value is dropped. *)
  | SLoad s t y : tr t → pc (th s t) = PIdle → y < NL →
      step s (setth s t (with_pc (th s t) (lh_enter (th s t) KLoad y (visx s y))))
  (** L26, the first plain CAS ([h.cas(self.off, old_w, new_w)]; a locked
      RMW: the thread's write-backs complete first), from the stable [old] to
      [new] annotated with the parity and the tid. *)
  | S26ok s t p town : tr t → pc (th s t) = P26 p town →
      let T := th s t in
      let w := LW (an T) (Some (p, t)) (Some (t, kk T)) in
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
      step s (setth s t (with_pc (th s t) (lh_ret (th s t) c (lv (visx s y)))))
  (** L8: another word: [old := cur; goto 4] ([Waited::Changed]). *)
  | SH5chg s t c y a tc : tr t → pc (th s t) = PLH c y (H5 a tc) → la (visx s y) ≠ None →
      phys (visx s y) ≠ phys a →
      step s (setth s t (with_pc (th s t) (PLH c y (H4 (visx s y)))))
  (** L9: the same word when patience ran out ([Waited::Expired]); when it
      runs out is the scheduler's choice. *)
  | SH5same s t c y a tc : tr t → pc (th s t) = PLH c y (H5 a tc) → phys (visx s y) = phys a →
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
      phys (visx (pfence s t) y) = phys a →
      step s (setth (pwrite (pfence s t) (LX y) (CLoc (LW (lv a) None None))) t
               (with_pc (th s t) (lh_ret (th s t) c (lv a))))
  (** L18–L19: it fails: [old := cur; goto 2]. *)
  | SH18fail s t c y a tc : tr t → pc (th s t) = PLH c y (H18 a tc) →
      phys (visx (pfence s t) y) ≠ phys a →
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
                then pwrite s1 (LX (ax T)) (CLoc (LW (an T) None None)) else s1 in
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
      operation is re-run in recovery mode. *)
  | STCrash s t : tr t →
      step s (setth (drop_pwbs s t) t (with_pc (th s t) (crash_pc (th s t).(pc))))
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
        (∀ b, last (hx s y) = Some b → phys b = phys a → b = a) ∧
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
    Lemma fr_mpend u : u ≠ t → mpend s u → mpend s' u.
    Proof.
      unfold mpend. rewrite fr_hm. intros Hu [Hin | Hmk]; [left; by apply (fr_pwbs Hf) |].
      right. apply (fr_mk_len (LMl u)); [| done]. unfold hm. by rewrite fmap_length.
    Qed.
    Lemma fr_lcov w y i : w ≠ t → lcov s w y i → lcov s' w y i.
    Proof.
      unfold lcov. intros Hw [(n & Hin & Hi) | Hi]; [left; exists n; split; [by apply (fr_pwbs Hf) | done] |].
      right. pose proof (fr_mk Hf (LX y)). lia.
    Qed.
    Lemma fr_hcov w p u tc : incr (hh s p u) → w ≠ t → hcov s w p u tc → hcov s' w p u tc.
    Proof.
      unfold hcov. rewrite fr_hh. intros Hinc Hw [(n & Hin & Hi) | Hi];
        [left; exists n; split; [by apply (fr_pwbs Hf) | done] |].
      right. etrans; [exact Hi |]. apply hval_take_mono; [done | apply Hf].
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

    Lemma fr_lhok w y h : w ≠ t → lhok s w y h → lhok s' w y h.
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

    Lemma fr_pcok u : u ≠ t → pcok s u → pcok s' u.
    Proof.
      intros Hu. pose proof (fr_th Hf u Hu) as Hth. unfold pcok. rewrite Hth.
      assert (own (th s' u) = own (th s u)) as Ho' by by rewrite Hth.
      assert (ax (th s' u) = ax (th s u)) as Ha' by by rewrite Hth.
      destruct (pc (th s u)) as [| p town | c y h | p town | | p town | p town | p ts | p ts | [|] | | p town];
        intros Hp.
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
    - intros u Hu. destruct (decide (u = t)) as [-> | Hne]; [done |]. eapply fr_pcok; [done | done | done |].
      by apply (i_pc _ _ _ Hi).
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

  Lemma pcok_lhret s s' t c y v : inv s → frame s s' t → lhpre N NL s t c y →
    own (th s' t) = own (th s t) → ax (th s' t) = ax (th s t) →
    pc (th s' t) = lh_ret (th s' t) c v → pcok s' t.
  Proof.
    intros Hi Hf Hpre Ho Ha Hpc. unfold pcok. rewrite Hpc. destruct c as [p town | |]; simpl in *.
    - destruct Hpre. destruct (decide (v = ao (th s' t))); by apply (fr_pre26 Hf).
    - destruct Hpre. by apply (fr_failok Hf).
    - by apply (fr_idleok Hf).
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

  (** LOADHELP's steps that change only its position. *)
  Lemma step_lh_ret s s1 t c y h v : inv s → tr t → frame s s1 t → th s1 t = th s t →
    pc (th s t) = PLH c y h →
    inv (setth s1 t (with_pc (th s t) (lh_ret (th s t) c v))).
  Proof.
    intros Hi Ht Hf Hth Hpc. pose proof (pcok_at s t Hi Ht) as Hp. unfold pcok in Hp. rewrite Hpc in Hp.
    destruct Hp as [Hpre _].
    assert (Hf' : frame s (setth s1 t (with_pc (th s t) (lh_ret (th s t) c v))) t) by (apply frame_local; try done; by left).
    eapply inv_local; [done | done | exact Hf | done | done | done | done | done | by left | | |].
    - destruct c as [p town | |]; simpl in Hpre; [destruct Hpre as ((_ & _ & (_ & _ & ?) & _) & _) |
        destruct Hpre as ((_ & _ & ? & _) & _) | destruct Hpre as (_ & _ & ?)]; by left.
    - apply vis_mono; [done |]. by rewrite Hpc.
    - eapply (pcok_lhret s _ t c y v); [done | exact Hf' | done | by th_new | by th_new | by th_new].
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
