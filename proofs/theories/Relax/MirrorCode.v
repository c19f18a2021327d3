(** * Mirror's persistent atomic as the Rust code runs it: load, CAS, store

    Justifies, crash-free and for any number of threads, the data field of
    [impl/perdure-relax/src/patomic.rs] ([PAtomic]): [PAtomic::load],
    [PAtomic::compare_exchange] ([Space::mirror_cas], Algorithm 4.1 of the
    thesis with the fixes M1 and M2 of [specs/relax/README.md]) and
    [PAtomic::store] ([Space::cas_loop]).  [MirrorCas.v] is the seed's
    listing as published (line 47 included) without loads; this file is
    the code.

    The code ([pa_load], [pa_cas], [finish_dram_half], [cas_loop],
    [pa_store]) is heap_lang transcribed from [patomic.rs], each step
    commented with the Rust line ([Lnnn]) and the seed line it implements.
    What the transcription abstracts:
    - a replica's 16-byte [(value, sequence)] pair is one location holding
      the word [enc v s = s·2^64 + v] of [MirrorCas.v]: heap_lang's
      [CmpXchg] compares only unboxed values, so it cannot CAS a pair value;
      one word read and CASed at once is what the 16-byte DWCAS
      ([compare_exchange_16]) and 16-byte loads do.  [read_nvmm] is its
      16-byte branch (L334–L335); the seq/value/seq loop (L337–L346) and
      [Dram::read_pair]'s (dram.rs L220–L228) are taken to return a pair
      that was in memory at one moment (the GenMC and TLA+ models check
      that part: [modelcheck/genmc/relax_read_nvmm.c], [Mirror.tla]'s
      split reads).  [Dram::val] (L208) reads the value word: here the
      whole word, then its value;
    - sequence numbers are unbounded naturals: [next_seq] is [+ 1] (no
      wrap-around at 2^64, no MSB-sequence space); a fresh field is
      [(v, 1)] ([seq_init], [pa_new], not a transcription);
    - persistence is outside this crash-free layer: [pwb] and [pfence]
      (L425–L426, L449–L452) are no-ops, there are no crashes and no
      recovery; [track_field] (recovery tracking, L207, L219), the
      [PATIENCE] bound (L416–L422, a divergence guard), [RelaxError]
      paths, [trace_ev!], [pause!] and [mutant!] are left out;
    - [finish_dram_half]'s mask [& !RECOVERY_MARK] is transcribed, but a
      data field carries no mark: the proof shows its L501 DWCAS is never
      reached (DRAM is past the old sequence when L459 fails).

    Proved, in Iris 4.0 with [iris.program_logic.atomic] (closed):
    - [pa_load_spec]:
        <<< ∀∀ v, pa_val γ v >>> pa_load #d @ ↑N <<< pa_val γ v, RET #v >>>
    - [pa_cas_spec] (for [0 ≤ new < 2^64]):
        <<< ∀∀ v, pa_val γ v >>> pa_cas #p #d #e #new @ ↑N
        <<< pa_val γ (if v = e then new else v),
            RET (if v = e then InjLV #e else InjRV #v) >>>
      ([Ok(Ok(expected))], [Ok(Err(current))]);
    - [cas_loop_spec], [pa_store_spec] (for [0 ≤ v < 2^64]):
        <<< ∀∀ w, pa_val γ w >>> pa_store #p #d #v @ ↑N <<< pa_val γ v, RET #() >>>
    - [pa_new_spec], and [help_dwcas_spec], [finish_dram_half_spec] for
      the helping DWCAS (L427) and the M2 loop.
    The abstract value is DRAM's (what loads return).  A load linearizes
    at its read of DRAM; a failing CAS at its read of DRAM (L414: the
    sequences agree, so DRAM holds NVMM's value, which is not
    [expected]); a successful CAS when DRAM reaches the sequence its NVMM
    DWCAS (L443) wrote, by its own L459 DWCAS or by another CAS's helping
    L427 DWCAS: the CAS leaves its atomic update in an invariant ([op_inv])
    at L443 and whoever moves DRAM commits it (helping).  The M1 fix is
    needed: a failed L443 retries (L479–L481), so no failure is decided on
    a stale DRAM pair.  A store linearizes at its successful CAS.

    The invariant [pa_inv_body]: NVMM holds sequence [n] and DRAM [dn] of
    one history of values, [dn = n ∨ dn + 1 = n] (Mirror's first
    invariant), DRAM's sequence never goes back, NVMM moves only by a DWCAS
    from a pair with equal sequences (Mirror's second invariant), and while
    [dn + 1 = n] the CAS that wrote [n] has its [op_inv].

    Not covered: crashes, recovery and the Px86 persistence order
    ([Relax/RecoverFieldPx.v], [specs/relax/Mirror.tla]); the pointer
    field ([PAtomicPtr], recovery marks, Algorithms 6.3–6.4, the case M2
    is about); [fetch_add]; termination/lock-freedom (the WPs are
    partial).  Compile time: about 45 s of CPU. *)
From iris.algebra Require Import excl.
From iris.base_logic.lib Require Import invariants ghost_var ghost_map mono_nat.
From iris.program_logic Require Import atomic.
From iris.heap_lang Require Import proofmode notation.
From perdure.Relax Require Import MirrorCas.
From iris.prelude Require Import options.
Local Open Scope Z_scope.

(** ** The code, transcribed from [impl/perdure-relax/src/patomic.rs]

    Line numbers [Lnnn] are lines of [patomic.rs]; the seed's lines of
    Algorithm 4.1 (as the Rust comments name them) are in brackets.  A pair
    [(v, s)] of a replica is the word [s·B + v] ([enc v s] of
    [MirrorCas.v]): [w `rem` B] is its value, [w `quot` B] its sequence. *)

(** [!RECOVERY_MARK] as a 64-bit mask (L133). *)
Definition not_mark : Z := B - 1 - 4.

(** [PAtomic::load] (L198–L202) → [tracked_val] (L206–L209) →
    [Dram::val] (dram.rs L197–L199): the DRAM replica's value word. *)
Definition pa_load : val :=
  λ: "d",
    (!"d") `rem` #B.                                        (* L208 s.dram.val(off) *)

(** [Space::finish_dram_half] (L495–L509), fix M2. *)
Definition finish_dram_half : val :=
  rec: "fin" "d" "bv" "bs" "av" "as" :=
    let: "now" := !"d" in                                   (* L497 dram.read_pair *)
    let: "nv" := "now" `rem` #B in
    let: "ns" := "now" `quot` #B in
    if: (~ ("ns" = "bs")) ||                                (* L498 now.1 != before.1 || *)
        (~ (BinOp AndOp "nv" #not_mark = BinOp AndOp "bv" #not_mark))
                                                            (*      now.0 & !MARK != before.0 & !MARK *)
    then #()                                                (* L499 return *)
    else
      if: Snd (CmpXchg "d" "now" ("as" * #B + "av"))        (* L501 dram.dwcas(now, after) *)
      then #()                                              (* L505–L506 if done return *)
      else "fin" "d" "bv" "bs" "av" "as".                   (* L496 loop *)

(** [Space::mirror_cas] (L401–L485), Algorithm 4.1 with the fixes M1
    (L479–L482) and M2 (L461–L463).  [Ok(x)] is [InjL x], [Err(x)] is
    [InjR x]. *)
Definition pa_cas : val :=
  rec: "cas" "p" "d" "e" "new" :=
    (* L412 read_nvmm [L5–L7]: its 16-byte branch, L334–L335 *)
    let: "wp" := !"p" in
    let: "pv" := "wp" `rem` #B in
    let: "ps" := "wp" `quot` #B in
    (* L414 dram.read_pair [L9–L11] *)
    let: "wv" := !"d" in
    let: "vv" := "wv" `rem` #B in
    let: "vs" := "wv" `quot` #B in
    (* L424 [L18]: ps == next_seq(vs) && ps != vs *)
    if: ("ps" = "vs" + #1) && ~ ("ps" = "vs") then
      (* L425–L426 pwb, pfence [L20–L21]: no-ops here *)
      CmpXchg "d" ("vs" * #B + "vv") ("ps" * #B + "pv");;   (* L427 dram.dwcas [L24] *)
      "cas" "p" "d" "e" "new"                               (* L429 continue *)
    else if: ~ ("ps" = "vs") then                           (* L432 [L27] *)
      "cas" "p" "d" "e" "new"                               (* L434 continue *)
    else if: ~ ("pv" = "e") then                            (* L437 [L30–L33] *)
      InjR "pv"                                             (* L438 Ok(Err(pv)) *)
    else
      let: "as" := "ps" + #1 in                             (* L442 after = (new, next_seq(ps)) *)
      let: "res" := CmpXchg "p" ("ps" * #B + "pv") ("as" * #B + "new") in
                                                            (* L443 nvmm.compare_exchange [L40] *)
      (* L449–L452 pwb, pfence [L41–L42]: no-ops here *)
      if: Snd "res" then                                    (* L458 Ok(_) *)
        let: "done" := Snd (CmpXchg "d" ("vs" * #B + "vv") ("as" * #B + "new")) in
                                                            (* L459 dram.dwcas((vv, vs), after) [L44] *)
        (if: ~ "done" then                                  (* L461 *)
           finish_dram_half "d" "vv" "vs" "new" "as"        (* L462 *)
         else #());;
        InjL "e"                                            (* L464 Ok(Ok(expected)) *)
      else
        "cas" "p" "d" "e" "new".                            (* L479–L481 Err(_) => continue (M1) *)

(** [Space::cas_loop] (L309–L316): CAS from [cur] to [f cur] until it
    succeeds; returns the value replaced. *)
Definition cas_loop : val :=
  rec: "loop" "p" "d" "cur" "f" :=
    match: pa_cas "p" "d" "cur" ("f" "cur") with            (* L311 *)
      InjL <> => "cur"                                      (* L312 Ok(_) => return Ok(cur) *)
    | InjR "now" => "loop" "p" "d" "now" "f"                (* L313 Err(now) => cur = now *)
    end.

(** [PAtomic::store] (L224–L226): [cas_loop] from [expected] (L229–L233, a
    load of DRAM's value) with [|_| v]. *)
Definition pa_store : val :=
  λ: "p" "d" "v",
    cas_loop "p" "d" (pa_load "d") (λ: <>, "v");; #().     (* L225 *)

(** A fresh field: both replicas hold [(v, seq_init)] with [seq_init = 1]
    (L286–L292, outside an MSB-sequence space).  Not a transcription: the
    Rust code writes fresh fields with [Dram::store_pair] and the pool's
    initialisation. *)
Definition pa_new : val :=
  λ: "v", (ref (#B + "v"), ref (#B + "v")).

(** ** Ghost state *)
Class paG Σ := PaG {
  pa_ghost_varG :> ghost_varG Σ Z;
  pa_histG :> ghost_mapG Σ nat Z;
  pa_mono_natG :> mono_natG Σ;
  pa_tokG :> inG Σ (exclR unitO)
}.
Definition paΣ : gFunctors :=
  #[ghost_varΣ Z; ghost_mapΣ nat Z; mono_natΣ; GFunctor (exclR unitO)].
Global Instance subG_paΣ {Σ} : subG paΣ Σ → paG Σ.
Proof. solve_inG. Qed.

Record pa_name := PaName {
  pa_γval : gname;    (* the abstract value: DRAM's *)
  pa_γhist : gname;   (* version i ↦ the value NVMM held at sequence i *)
  pa_γdram : gname    (* DRAM's sequence, monotone; two halves of its authority *)
}.

Section spec.
  Context `{!heapGS Σ, !paG Σ} (N : namespace).
  Local Notation Nm := (N .@ "main").
  Local Notation No := (N .@ "op").

  (** The client's half of the abstract value. *)
  Definition pa_val (γ : pa_name) (v : Z) : iProp Σ := ghost_var (pa_γval γ) (1/2) v.

  Definition hist_at (γ : pa_name) (i : nat) (v : Z) : iProp Σ := i ↪[pa_γhist γ]□ v.
  Definition dram_half (γ : pa_name) (n : nat) : iProp Σ :=
    mono_nat_auth_own (pa_γdram γ) (1/2) n.
  Definition dram_lb (γ : pa_name) (n : nat) : iProp Σ := mono_nat_lb_own (pa_γdram γ) n.
  Definition tok (γt : gname) : iProp Σ := own γt (Excl ()).

  (** The atomic update of a CAS from [e] to [nw] (what [pa_cas_spec]
      receives), once its NVMM DWCAS has succeeded: whoever moves DRAM to
      the new sequence (the CAS itself at L459, or a helper at L427)
      commits it. *)
  Definition cas_au (γ : pa_name) (e nw : Z) (Φ : val → iProp Σ) : iProp Σ :=
    AU << ∃∃ v : Z, pa_val γ v >> @ ⊤∖↑N, ∅
       << pa_val γ (if bool_decide (v = e) then nw else v),
          COMM Φ (if bool_decide (v = e) then InjLV #e else InjRV #v) >>.

  (** One successful NVMM DWCAS from sequence [s] to [S s]: pending (its
      atomic update and DRAM's other half, DRAM being at [s]) until DRAM
      reaches [S s]; then done, holding the result for the CAS's thread
      (which holds [tok γt] until it takes it). *)
  Definition op_inv (γ : pa_name) (γt : gname) (Φ : val → iProp Σ) (e nw : Z) (s : nat) :
      iProp Σ :=
    hist_at γ s e ∗ hist_at γ (S s) nw ∗
    ((cas_au γ e nw Φ ∗ dram_half γ s) ∨ (dram_lb γ (S s) ∗ (Φ (InjLV #e) ∨ tok γt))).

  Definition pending_op (γ : pa_name) (s : nat) : iProp Σ :=
    ∃ γt Φ e nw, inv No (op_inv γ γt Φ e nw s).

  (** NVMM holds sequence [n], DRAM sequence [dn], with [dn = n] or
      [dn + 1 = n] (Mirror's first invariant); each holds the history's
      value for its sequence; the abstract value is DRAM's.  When
      [dn + 1 = n], an [op_inv] for [dn] holds DRAM's other half. *)
  Definition pa_inv_body (γ : pa_name) (p d : loc) : iProp Σ :=
    ∃ (m : gmap nat Z) (n dn : nat) (vn vd : Z),
      p ↦ #(enc vn (Z.of_nat n)) ∗ d ↦ #(enc vd (Z.of_nat dn)) ∗
      ghost_map_auth (pa_γhist γ) 1 m ∗ ([∗ map] i ↦ v ∈ m, i ↪[pa_γhist γ]□ v) ∗
      dram_half γ dn ∗ ghost_var (pa_γval γ) (1/2) vd ∗
      ⌜m !! n = Some vn ∧ m !! dn = Some vd ∧ (∀ i, is_Some (m !! i) → (i ≤ n)%nat) ∧
       map_Forall (λ _ v, 0 ≤ v < B) m⌝ ∗
      ((⌜dn = n⌝ ∗ dram_half γ dn) ∨ (⌜S dn = n⌝ ∗ pending_op γ dn)).

  Definition is_pa (γ : pa_name) (p d : loc) : iProp Σ := inv Nm (pa_inv_body γ p d).

  (** By [inv_persistent] itself: [apply _] finds it too, but only after
      about 55 s of CPU in the typeclass search (half this file's time). *)
  Global Instance is_pa_persistent γ p d : Persistent (is_pa γ p d).
  Proof. apply inv_persistent. Qed.
  Global Instance pending_op_persistent γ s : Persistent (pending_op γ s).
  Proof. apply _. Qed.

  (** *** Ghost lemmas *)
  Lemma dram_half_three γ a b c : dram_half γ a -∗ dram_half γ b -∗ dram_half γ c -∗ False.
  Proof.
    iIntros "H1 H2 H3". rewrite /dram_half.
    iDestruct (mono_nat_auth_own_agree with "H1 H2") as %[_ <-].
    iCombine "H1 H2" as "H".
    iDestruct (mono_nat_auth_own_agree with "H H3") as %[Hq _].
    by apply Qp.not_add_le_l in Hq.
  Qed.

  Lemma dram_halves_update γ a b n' :
    (a ≤ n')%nat → dram_half γ a -∗ dram_half γ b ==∗
    dram_half γ n' ∗ dram_half γ n' ∗ dram_lb γ n'.
  Proof.
    iIntros (?) "H1 H2". rewrite /dram_half /dram_lb.
    iDestruct (mono_nat_auth_own_agree with "H1 H2") as %[_ <-].
    iCombine "H1 H2" as "H".
    iMod (mono_nat_own_update n' with "H") as "[H $]"; first done.
    iDestruct "H" as "[$ $]". done.
  Qed.

  Lemma dram_half_lb γ n m : dram_half γ n -∗ dram_lb γ m -∗ ⌜(m ≤ n)%nat⌝.
  Proof.
    iIntros "H1 H2". by iDestruct (mono_nat_lb_own_valid with "H1 H2") as %[_ ?].
  Qed.

  Lemma cas_au_commit γ e nw Φ E :
    ⊤∖↑N ⊆ E →
    cas_au γ e nw Φ -∗ ghost_var (pa_γval γ) (1/2) e ={E}=∗
    ghost_var (pa_γval γ) (1/2) nw ∗ Φ (InjLV #e).
  Proof.
    iIntros (HE) "AU Hv". rewrite /cas_au.
    iMod (fupd_mask_subseteq (⊤∖↑N)) as "Hcl"; first done.
    iMod "AU" as (v) "[Hv' [_ Hcommit]]".
    iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
    iMod (ghost_var_update_2 nw with "Hv Hv'") as "[Hv Hv']"; first by rewrite Qp.half_half.
    iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_true.
    iMod "Hcl" as "_". rewrite bool_decide_true //. by iFrame.
  Qed.

  (** What a reader of NVMM learns from the slot: DRAM is at NVMM's
      sequence, or an [op_inv] holds the pending write. *)
  Lemma slot_info γ (n dn : nat) :
    ((⌜dn = n⌝ ∗ dram_half γ dn) ∨ (⌜S dn = n⌝ ∗ pending_op γ dn)) -∗
    ((⌜dn = n⌝ ∗ dram_half γ dn) ∨ (⌜S dn = n⌝ ∗ pending_op γ dn)) ∗
    (dram_lb γ n ∨ (⌜S dn = n⌝ ∗ pending_op γ dn)).
  Proof.
    iIntros "[[%Heq H] | [%Heq #H]]".
    - subst dn. iDestruct (mono_nat_lb_own_get with "H") as "#Hlb".
      iSplitL; [iLeft; by iFrame|by iLeft].
    - iSplitL; iRight; by iFrame "#".
  Qed.

  (** *** Opening and closing the invariant *)
  (* Where the proofs close it by hand, [iFrame] names the hypotheses that go
     back, in its order: [iFrame "∗ #"] tried every hypothesis, the
     persistent ones too, against the whole body (up to 1.2 s a call). *)
  Local Ltac open_main :=
    iInv "Hinv" as (m n dn vn vd) "(>Hp & >Hd & >Hm & >#Hfr & >Hdn & >Hv & >%Hpure & Hslot)".
  Local Ltac close_main :=
    iModIntro; iSplitL "Hp Hd Hm Hdn Hv Hslot";
    [iNext; rewrite /pa_inv_body; iExists _, _, _, _, _; iFrame "Hp Hd Hm Hfr Hdn Hv Hslot"; by iPureIntro
    |iClear "Hfr"].

  Lemma pa_new_spec (v : Z) :
    0 ≤ v < B →
    {{{ True }}} pa_new #v {{{ γ (p d : loc), RET (#p, #d); is_pa γ p d ∗ pa_val γ v }}}.
  Proof.
    iIntros (Hv Φ) "_ HΦ". wp_lam. wp_alloc d as "Hd". wp_alloc p as "Hp". wp_pures.
    iMod (ghost_var_alloc v) as (γv) "[Hv1 Hv2]".
    iMod (ghost_map_alloc_empty (K:=nat) (V:=Z)) as (γh) "Hm".
    iMod (ghost_map_insert_persist 1%nat v with "Hm") as "[Hm #H1]"; first done.
    iMod (mono_nat_own_alloc 1) as (γd) "[[Hdn1 Hdn2] _]".
    set (γ := PaName γv γh γd).
    iMod (inv_alloc Nm _ (pa_inv_body γ p d) with "[Hp Hd Hm Hdn1 Hdn2 Hv1]") as "#Hinv".
    { iNext. iExists {[1%nat := v]}, 1%nat, 1%nat, v, v.
      assert (B + v = enc v (Z.of_nat 1)) as <- by (unfold enc; lia).
      iFrame "Hp Hd Hm Hdn2 Hv1". rewrite big_sepM_singleton. iFrame "H1". iSplit.
      - iPureIntro. split_and!; [by rewrite lookup_singleton|by rewrite lookup_singleton| |].
        + intros i [x Hi]. apply lookup_singleton_Some in Hi as [<- _]. lia.
        + by apply map_Forall_singleton.
      - iLeft. by iFrame. }
    iModIntro. iApply "HΦ". iFrame "Hinv". done.
  Qed.

  (** *** Load: linearizes at its read of DRAM *)
  Lemma pa_load_spec γ (p d : loc) :
    is_pa γ p d -∗
    <<< ∀∀ v : Z, pa_val γ v >>> pa_load #d @ ↑N <<< pa_val γ v, RET #v >>>.
  Proof.
    iIntros "#Hinv" (Φ) "AU". pose proof B_pos. wp_lam.
    wp_bind (!_)%E. open_main. wp_load.
    pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
    iMod (fupd_mask_subseteq (⊤∖↑N)) as "Hcl"; first solve_ndisj.
    iMod "AU" as (v) "[Hv' [_ Hcommit]]".
    iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
    iMod ("Hcommit" with "Hv'") as "HΦ". iMod "Hcl" as "_".
    close_main. wp_pures. rewrite enc_rem; [done|done|lia].
  Qed.

  (** *** The M2 loop: after a failed L459, DRAM is already past [bs] *)
  Lemma finish_dram_half_spec γ (p d : loc) (bv av as_ : Z) (bs : nat) :
    {{{ is_pa γ p d ∗ dram_lb γ (S bs) }}}
      finish_dram_half #d #bv #(Z.of_nat bs) #av #as_
    {{{ RET #(); True }}}.
  Proof.
    iIntros (Φ) "[#Hinv #Hlb] HΦ". pose proof B_pos. wp_rec. wp_pures.
    wp_bind (!_)%E. open_main. wp_load.
    pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
    iDestruct (dram_half_lb with "Hdn Hlb") as %Hle.
    close_main. wp_pures. rewrite enc_quot; [|done|lia].
    rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures. by iApply "HΦ".
  Qed.

  (** *** A helping DWCAS on DRAM (L427, seed L24): when it succeeds it
      moves DRAM to the pending sequence and commits the pending CAS. *)
  Lemma help_dwcas_spec γ (p d : loc) (t : nat) (x y : Z) :
    0 ≤ x < B →
    {{{ is_pa γ p d ∗ hist_at γ (S t) y ∗ pending_op γ t }}}
      CmpXchg #d #(enc x (Z.of_nat t)) #(enc y (Z.of_nat (S t)))
    {{{ w, RET w; True }}}.
  Proof.
    iIntros (Hx Φ) "(#Hinv & #Hy & #Hpend) HΦ". pose proof B_pos.
    iDestruct "Hpend" as (γt Ψ e nw) "#Hop".
    open_main. pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
    destruct (decide (enc vd (Z.of_nat dn) = enc x (Z.of_nat t))) as [Heq|Hneq]; last first.
    { wp_cmpxchg_fail. close_main. iApply "HΦ". by iPureIntro. }
    destruct (enc_inj vd (Z.of_nat dn) x (Z.of_nat t) Hvd ltac:(lia) Hx ltac:(lia) Heq) as [-> Ht].
    assert (dn = t) as -> by lia. clear Ht.
    iInv "Hop" as "(#He & #Hnw & Hst)".
    wp_cmpxchg_suc.
    iDestruct (ghost_map_lookup with "Hm Hy") as %Hmy.
    iDestruct (ghost_map_lookup with "Hm He") as %Hme.
    iDestruct (ghost_map_lookup with "Hm Hnw") as %Hmnw.
    rewrite Hmy in Hmnw. injection Hmnw as <-.
    rewrite Hmd in Hme. injection Hme as <-.
    assert (S t ≤ n)%nat by (apply Hdom; eauto).
    iDestruct "Hslot" as "[[%Hn _] | [%Hn _]]"; first lia.
    subst n. rewrite Hmy in Hmn. injection Hmn as <-.
    iDestruct "Hst" as "[[AU Hh] | [#Hlb _]]"; last first.
    { iDestruct (dram_half_lb with "Hdn Hlb") as %?. lia. }
    iMod (dram_halves_update _ _ _ (S t) with "Hdn Hh") as "(Hdn & Hh & #Hlb)"; first lia.
    iMod (cas_au_commit with "AU Hv") as "[Hv HΦ']"; first solve_ndisj.
    iModIntro. iSplitL "HΦ'".
    { iNext. iFrame "He Hnw". iRight. iFrame "Hlb". by iLeft. }
    iModIntro. iSplitL "Hp Hd Hm Hdn Hv Hh".
    { iNext. iExists m, (S t), (S t), y, y. iFrame "Hp Hd Hm Hfr Hh Hv". iSplit.
      - iPureIntro. split_and!; done.
      - iLeft. by iFrame. }
    iApply "HΦ". by iPureIntro.
  Qed.

  (** *** CAS ([Space::mirror_cas]): a failure linearizes at its read of
      DRAM (L414), a success when DRAM reaches the sequence its NVMM DWCAS
      (L443) wrote: at its own L459, or at a helper's L427. *)
  Lemma pa_cas_spec γ (p d : loc) (e nw : Z) :
    0 ≤ nw < B →
    is_pa γ p d -∗
    <<< ∀∀ v : Z, pa_val γ v >>> pa_cas #p #d #e #nw @ ↑N
    <<< pa_val γ (if bool_decide (v = e) then nw else v),
        RET (if bool_decide (v = e) then InjLV #e else InjRV #v) >>>.
  Proof.
    iIntros (Hnw) "#Hinv". iIntros (Φ) "AU". pose proof B_pos as HB. iLöb as "IH".
    wp_rec. wp_pures.
    (* L412: read NVMM *)
    wp_bind (!_)%E. open_main. wp_load.
    assert (0 ≤ vn < B) as Hpv.
    { destruct Hpure as (Hmn & _ & _ & Hrange). exact (Hrange _ _ Hmn). }
    iDestruct (big_sepM_lookup with "Hfr") as "#Hpvh"; first exact (proj1 Hpure).
    iDestruct (slot_info with "Hslot") as "[Hslot #H5]".
    close_main.
    rename n into ps, vn into pv, dn into dn0, m into m0, vd into vd0, Hpure into Hpure0.
    wp_pures.
    (* L414: read DRAM *)
    wp_bind (!_)%E. open_main. wp_load.
    pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    assert (0 ≤ vd < B) as Hvv by exact (Hrange _ _ Hmd).
    iDestruct (ghost_map_lookup with "Hm Hpvh") as %Hmps.
    iDestruct (mono_nat_lb_own_get with "Hdn") as "#Hlbv".
    iDestruct (big_sepM_lookup with "Hfr") as "#Hvvh"; first exact Hmd.
    assert (ps = dn → vd = pv) as Hsame.
    { intros ->. rewrite Hmd in Hmps. by injection Hmps. }
    assert (enc pv (Z.of_nat ps) `rem` B = pv) as Hr1 by (apply enc_rem; lia).
    assert (enc pv (Z.of_nat ps) `quot` B = Z.of_nat ps) as Hq1 by (apply enc_quot; lia).
    assert (enc vd (Z.of_nat dn) `rem` B = vd) as Hr2 by (apply enc_rem; lia).
    assert (enc vd (Z.of_nat dn) `quot` B = Z.of_nat dn) as Hq2 by (apply enc_quot; lia).
    destruct (decide (ps = S dn)) as [Hhelp|Hnhelp].
    { (* L424–L429: help the pending write, then retry *)
      iAssert (pending_op γ dn) as "#Hpo".
      { iDestruct "H5" as "[Hlb5 | [%Hs Hpo]]".
        - iDestruct (dram_half_lb with "Hdn Hlb5") as %?. lia.
        - assert (dn0 = dn) as -> by lia. done. }
      close_main. wp_pures. rewrite ?Hr1 ?Hq1 ?Hr2 ?Hq2.
      rewrite bool_decide_true; last (do 2 f_equal; lia). wp_pures.
      rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures.
      subst ps.
      change (Z.of_nat dn * B + vd) with (enc vd (Z.of_nat dn)).
      change (Z.of_nat (S dn) * B + pv) with (enc pv (Z.of_nat (S dn))).
      wp_apply (help_dwcas_spec _ _ _ dn vd pv Hvv with "[$Hinv $Hpvh $Hpo]").
      iIntros (w) "_". wp_pures. iApply ("IH" with "AU"). }
    destruct (decide (ps = dn ∧ pv ≠ e)) as [[Hps Hne]|Hnlp].
    { (* L437–L438: the failure's linearization point is this read *)
      subst ps. rewrite (Hsame eq_refl).
      iMod (fupd_mask_subseteq (⊤∖↑N)) as "Hcl"; first solve_ndisj.
      iMod "AU" as (v) "[Hv' [_ Hcommit]]".
      iDestruct (ghost_var_agree with "Hv Hv'") as %<-.
      iMod ("Hcommit" with "[Hv']") as "HΦ"; first by rewrite bool_decide_false.
      iMod "Hcl" as "_".
      rewrite (bool_decide_false (pv = e)) //.
      close_main. wp_pures. rewrite ?Hr1 ?Hq1 ?Hr2 ?Hq2.
      rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures.
      rewrite bool_decide_true //. wp_pures.
      rewrite bool_decide_false; last (intros [= ?]; done). wp_pures. done. }
    close_main.
    rename n into n1, vn into vn1, dn into vs, m into m1, vd into vv, Hpure into Hpure1.
    clear Hmn Hmd Hdom Hrange Hmps.
    wp_pures. rewrite ?Hr1 ?Hq1 ?Hr2 ?Hq2.
    rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures.
    destruct (decide (ps = vs)) as [<-|Hdiff]; last first.
    { (* L432–L434: the sequences differ: retry *)
      rewrite bool_decide_false; last (intros [= ?]; lia). wp_pures. iApply ("IH" with "AU"). }
    assert (pv = e) as -> by (destruct (decide (pv = e)); [done|exfalso; by apply Hnlp]).
    rewrite (Hsame eq_refl).
    rewrite bool_decide_true //. wp_pures. rewrite bool_decide_true //. wp_pures.
    change (Z.of_nat ps * B + e) with (enc e (Z.of_nat ps)).
    assert ((Z.of_nat ps + 1) * B + nw = enc nw (Z.of_nat (S ps))) as -> by (unfold enc; lia).
    (* L443: DWCAS on NVMM *)
    iMod (own_alloc (Excl ())) as (γt) "Htok"; first done.
    wp_bind (CmpXchg _ _ _). open_main.
    pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    assert (0 ≤ vn < B) as Hvn by exact (Hrange _ _ Hmn).
    destruct (decide (enc vn (Z.of_nat n) = enc e (Z.of_nat ps))) as [Heq|Hneq]; last first.
    { (* M1: the DWCAS failed: retry from the top *)
      wp_cmpxchg_fail. close_main. wp_pures. iApply ("IH" with "AU"). }
    rewrite Heq. wp_cmpxchg_suc.
    destruct (enc_inj vn (Z.of_nat n) e (Z.of_nat ps) Hvn ltac:(lia) Hpv ltac:(lia) Heq)
      as [-> Hn].
    assert (n = ps) as -> by lia. clear Hn.
    iDestruct (dram_half_lb with "Hdn Hlbv") as %Hge.
    iDestruct "Hslot" as "[[%Hdn' Hh] | [%Hdn' _]]"; last lia.
    subst dn.
    assert (m !! S ps = None) as Hfree.
    { destruct (m !! S ps) eqn:E; [|done]. exfalso.
      assert (S ps ≤ ps)%nat by (apply Hdom; eauto). lia. }
    iMod (ghost_map_insert_persist (S ps) nw with "Hm") as "[Hm #Hnew]"; first exact Hfree.
    iMod (inv_alloc No _ (op_inv γ γt Φ e nw ps) with "[AU Hh]") as "#Hop".
    { iNext. rewrite /op_inv. iFrame "Hpvh Hnew". iLeft. iFrame. }
    iModIntro. iSplitL "Hp Hd Hm Hdn Hv".
    { iNext. iExists (<[S ps := nw]> m), (S ps), ps, nw, vd. iFrame "Hp Hd Hm Hdn Hv".
      rewrite big_sepM_insert //. iFrame "Hnew Hfr". iSplit.
      - iPureIntro. split_and!.
        + by rewrite lookup_insert.
        + rewrite lookup_insert_ne //; lia.
        + intros i [x Hi]. destruct (decide (i = S ps)) as [->|Hi']; [lia|].
          rewrite lookup_insert_ne in Hi; [|done]. assert (i ≤ ps)%nat by (apply Hdom; eauto). lia.
        + by apply map_Forall_insert_2.
      - iRight. iSplit; first done. iExists γt, Φ, e, nw. done. }
    iClear "Hfr". clear Hmn Hmd Hdom Hrange Hfree.
    rename m into m3, vd into vd3, Hpure into Hpure3.
    wp_pures.
    assert ((Z.of_nat ps + 1) * B + nw = enc nw (Z.of_nat (S ps))) as -> by (unfold enc; lia).
    (* L459: DWCAS on DRAM *)
    wp_bind (CmpXchg _ _ _). open_main.
    pose proof Hpure as (Hmn & Hmd & Hdom & Hrange).
    iInv "Hop" as "(_ & _ & Hst)".
    iDestruct "Hst" as "[[AU Hh] | [>#Hlbn Hres]]".
    - (* pending: this thread moves DRAM and commits its own CAS *)
      iMod "Hh" as "Hh".
      iDestruct (mono_nat_auth_own_agree with "Hdn Hh") as %[_ ->].
      iDestruct "Hslot" as "[[>%Hn >Hh3] | [>%Hn _]]".
      { iDestruct (dram_half_three with "Hdn Hh Hh3") as %[]. }
      subst n.
      iDestruct (ghost_map_lookup with "Hm Hpvh") as %Hme.
      rewrite Hmd in Hme. injection Hme as ->.
      iDestruct (ghost_map_lookup with "Hm Hnew") as %Hmnw.
      rewrite Hmn in Hmnw. injection Hmnw as ->.
      wp_cmpxchg_suc; first by rewrite /enc.
      iMod (dram_halves_update _ _ _ (S ps) with "Hdn Hh") as "(Hdn & Hh & #Hlbn)"; first lia.
      iMod (cas_au_commit with "AU Hv") as "[Hv HΦ]"; first solve_ndisj.
      iModIntro. iSplitL "Htok".
      { iNext. iFrame "Hpvh Hnew". iRight. iFrame "Hlbn". by iRight. }
      iModIntro. iSplitL "Hp Hd Hm Hdn Hv Hh".
      { iNext. iExists m, (S ps), (S ps), nw, nw. iFrame "Hp Hd Hm Hfr Hh Hv". iSplit.
        - iPureIntro. split_and!; done.
        - iLeft. by iFrame. }
      wp_pures. done.
    - (* done: a helper committed this CAS; take its result *)
      iDestruct "Hres" as "[HΦ | >Htok']".
      2:{ iDestruct (own_valid_2 with "Htok Htok'") as %[]. }
      iDestruct (dram_half_lb with "Hdn Hlbn") as %Hge2.
      assert (0 ≤ vd < B) as Hvd by exact (Hrange _ _ Hmd).
      wp_cmpxchg_fail.
      { intros [=Heq']. destruct (enc_inj vd (Z.of_nat dn) e (Z.of_nat ps) Hvd ltac:(lia) Hpv ltac:(lia) Heq') as [_ ?]. lia. }
      iModIntro. iSplitL "Htok".
      { iNext. iFrame "Hpvh Hnew". iRight. iFrame "Hlbn". by iRight. }
      close_main. wp_pures.
      wp_apply (finish_dram_half_spec with "[$Hinv $Hlbn]"). iIntros "_".
      wp_pures. done.
  Qed.

  (** *** Store ([PAtomic::store], a [cas_loop]) *)
  Lemma cas_loop_spec γ (p d : loc) (cur : Z) (fv : val) (f : Z → Z) :
    (∀ c, 0 ≤ f c < B) →
    is_pa γ p d -∗ (∀ c : Z, {{{ True }}} fv #c {{{ RET #(f c); True }}}) -∗
    <<< ∀∀ v : Z, pa_val γ v >>> cas_loop #p #d #cur fv @ ↑N <<< pa_val γ (f v), RET #v >>>.
  Proof.
    iIntros (Hf) "#Hinv #Hfv". iIntros (Φ) "AU". iLöb as "IH" forall (cur).
    wp_rec. wp_pures. wp_apply "Hfv"; first done. iIntros "_".
    awp_apply (pa_cas_spec with "Hinv"); first done.
    iApply (aacc_aupd with "AU"); first done.
    iIntros (v) "Hv". iAaccIntro with "Hv"; first by eauto with iFrame.
    iIntros "Hv !>". destruct (decide (v = cur)) as [->|Hne].
    - rewrite bool_decide_true //. iRight. iFrame. iIntros "HΦ !>". wp_pures. done.
    - rewrite bool_decide_false //. iLeft. iFrame. iIntros "AU !>". wp_pures.
      iApply ("IH" with "AU").
  Qed.

  Lemma pa_store_spec γ (p d : loc) (v : Z) :
    0 ≤ v < B →
    is_pa γ p d -∗
    <<< ∀∀ w : Z, pa_val γ w >>> pa_store #p #d #v @ ↑N <<< pa_val γ v, RET #() >>>.
  Proof.
    iIntros (Hv) "#Hinv". iIntros (Φ) "AU". wp_lam. wp_pures.
    awp_apply (pa_load_spec with "Hinv").
    iApply (aacc_aupd_abort with "AU"); first done.
    iIntros (x) "Hx". iAaccIntro with "Hx"; first by eauto with iFrame.
    iIntros "$ !> AU !>". wp_pures.
    awp_apply (cas_loop_spec _ _ _ _ _ (λ _, v) with "Hinv []"); first done.
    { iIntros (c Ψ) "!> _ HΨ". wp_pures. by iApply "HΨ". }
    iApply (aacc_aupd_commit with "AU"); first done.
    iIntros (w) "Hw". iAaccIntro with "Hw"; first by eauto with iFrame.
    iIntros "Hw !>". iFrame. iIntros "HΦ !>". wp_pures. done.
  Qed.

End spec.
