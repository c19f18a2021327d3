(** * Several Mirror data fields in one cache line, over histories

    [MirrorPxLin.v] proves one Mirror data field durably linearizable with
    the field alone in its cache line: its write-backs flush its own writes
    only.  The code lays a node's fields out side by side
    ([impl/perdure-relax/src/space/node.rs]: field [i] of a node is the
    16-byte persistent atomic at [node + 16·i], 16-aligned), so up to four
    fields share one 64-byte line (four data cells of an array node,
    [ds/array.rs]; a list or tree node's key beside its pointer fields), and
    [Space::mirror_cas]'s [self.pool.pwb(off, 16)] writes back the whole
    line ([Pool::pwb], [Backend::pwb_range]), whichever field's operation
    runs it.  This file models F data fields of RELAX's persistent atomic
    (seed 002: Mirror's [compare_exchange_strong], Algorithm 4.1;
    [recoverField], Algorithm 6.2; tracking, §6.4) in ONE line, as
    [impl/perdure-relax/src/patomic.rs] runs them, with any number of
    threads and of full crashes, and proves every run's history durably
    linearizable ([Core/DurableLin.v]) for the product of F registers
    ([prod_spec]), each the register of [MirrorPxLin.v] ([reg]: load, CAS
    returning the value it found, store).

    The state ([mst]): the line as the sequence [lw] of its writes since
    the last crash, each tagged with its field (an NVMM DWCAS of L40 or a
    line 4.1 CAS of [recover_field]), and [img], each field's pair in the
    crash image; ONE mark [lmk] for the line (every crash keeps at least the
    first [lmk] writes); each thread's pending write-back [lpw] of the line
    (the line's length when it issued [pwb]; its next [pfence] raises the
    mark to it, [Core/PxPersist.v]'s reading), whichever field it was for;
    per field, DRAM's pair [mdr], [mrec] (some [recover_field] of the field
    returned since the crash: the tracking gate, per field) and the next
    operation number [mnid]; the threads [mth], each idle or inside one
    operation on one field; the history [mh] over [(field, op)], the
    operation [k] of field [f] having the id [oid f k].  A field's NVMM pair
    ([nvf]) is its last write in the line, else its crash-image pair.

    The steps ([mstep]) are [MirrorPxLin.v]'s, each on the field of the
    thread's operation (the seed line, then the Rust function of
    [patomic.rs] with its line, next to each constructor), with the shared
    line's persistence: an L40 (or line 4.1) write is appended to the line,
    a [pwb] (L19, L41, R1's) records the line's length, whatever fields the
    writes before it were to, and the fence after it raises the line's
    mark; an eviction ([m_evict]) raises the mark by itself; a crash
    ([m_crash]) keeps any prefix of the line's writes at least as long as
    the mark (every field's new pair is its last write in that prefix),
    DRAM becomes any pairs, every field unrecovered, every thread gone.
    A run ([mreach]) starts right after a crash that left field [f] the
    pair [(v0 f, q0 f)] and any DRAM pairs.

    The proof is a simulation: every run, seen from one field [f]
    ([rel f]: [f]'s writes of the line, [f]'s DRAM pair, tracking bit and
    operations; threads working on other fields idle; ids renumbered), is a
    run of [MirrorPxLin.v]'s one-field model ([reach]) — a step on field
    [f] is the same step there, a step on another field none, and another
    field's write-back and fence, or an eviction, only raise the line's mark
    past what the one-field model's own mark records, i.e. they restrict
    the crash images that model allows anyway (its crash keeps any prefix
    at least as long as its mark, which is the fence-or-eviction reading of
    persistence).  The one-field model's history is durably linearizable
    ([mirror_px_durably_linearizable]); renumbered and labelled with its
    field ([lab]) it is the projection [h |_ f] of the run's history; and
    [durably_linearizable_local] gives the product.

    Proved, for every number F of fields, all crash-image pairs, any
    number of threads and of crashes:
    - [mirror_px_fields_sim]: every run's state is related, for each field
      [f], to a reachable state of [MirrorPxLin.v]'s model started from
      [f]'s crash-image pair;
    - [mirror_px_fields_durably_linearizable]: every run's history is
      durably linearizable for [prod_spec (λ f, reg (v0 f))]: F registers
      side by side, each starting at its crash-image value;
    - [mirror_px_fields_wf]: every run's history is well formed
      ([History.wf]);
    - [mirror_px_fields_not_vacuous]: a run of 2 fields and 2 threads (30
      steps, each checked by [vm_compute]) in which thread 0's CAS(0, 7) on
      field 1 writes NVMM (L40) and stops before its write-back (L41);
      thread 1's CAS(0, 5) on field 0 writes the line after it, writes the
      line back and fences (L41–L42) and returns: the line's mark now
      covers field 1's write, which no thread of field 1 wrote back, so
      every crash from that state keeps it (the theorem says so for every
      crash [m_crash] allows); a crash keeping exactly the mark's prefix
      cuts field 1's CAS off; after field 1's recovery (line 1 reads DRAM's
      garbage, line 2, R2's re-read, line 4 outside the window, R1's
      write-back and fence, line 5) thread 0's load of field 1 returns 7.
      The history is durably linearizable for the two registers, and the
      CAS is cut off; the load's 7 shows it took effect.
    The proof re-proves no invariant of the protocol: [rel_step] (a step
    of the line is one step of the field's own model, or none) rests on
    [MirrorPxLin.v]'s model as it is ([reach], [step]) and on its
    invariant only for one fact, that a thread idle in the field's model
    has no write-back pending ([idle_pw]); [lin_points_lab] relabels a
    witness; the well-formedness invariant [minv] is proved here.

    What the model abstracts, beyond what [MirrorPxLin.v] abstracts
    (unbounded sequence numbers, so R2's re-read is modelled but not
    relied on; SC atomic steps, 16-byte reads and DWCAS; the write-back and
    fence after a failed L40; tracking as a gate, Claim 1 by citation;
    pointer fields, [fetch_add], [PATIENCE], liveness):
    - the F fields share one line, F any number (the code's 64-byte line
      holds at most four 16-byte fields); fields in other lines are not in
      the model (a run over several lines would be this model per line,
      with locality again; not built here);
    - a crash keeps a prefix of the line's writes, in the order they
      became visible (Px86 for one line, as [PxPersist.v]); the NVMM DWCAS
      of one field persists atomically (PX86.md's assumption), and no
      write is torn across fields;
    - a field's recovery is its [recover_field] alone: the batch of
      [Space::recover_fields] (one write-back and fence for a node's
      fields) and [recover_node] are not modelled;
    - the F fields are data fields ([PAtomic]); pointer fields with
      recovery marks ([MirrorMarksPxCrash.v]) are not combined with them
      here. *)
From stdpp Require Import countable base list relations.
From Coq Require Import Lia.
From perdure.Core Require Import History DurableLin.
From perdure.Relax Require Import MirrorPxLin.

(** ** The model *)

(** The writes to field [f] among the line's writes, in order. *)
Definition fw (f : nat) (l : list (nat * pair)) : list pair :=
  omap (λ x, if decide (x.1 = f) then Some x.2 else None) l.

(** A thread: idle, or inside operation number [k] of field [f] ([oid f k]
    in the history), at [MirrorPxLin.v]'s position [pc]. *)
Inductive mtst : Type :=
| MIdle
| MOp (f : nat) (k : nat) (op : mop) (pc : pcv).

Record mst : Type := MSt {
  lw : list (nat * pair);         (* the line's writes since the last crash, with their fields *)
  img : nat → pair;               (* each field's pair in the last crash image *)
  lmk : nat;                      (* how many of [lw] every crash keeps (the line's mark) *)
  lpw : nat → nat;                (* a thread's pending write-back of the line: its length when issued *)
  mdr : nat → pair;               (* each field's DRAM pair *)
  mrec : nat → bool;              (* a recover_field of the field returned since the last crash *)
  mth : nat → mtst;               (* the threads *)
  mnid : nat → nat;               (* each field's next operation number *)
  mh : history (nat * mop) nat;   (* the history *)
}.

(** Field [f]'s NVMM pair: its last write in the line, else its
    crash-image pair. *)
Definition nvf (m : mst) (f : nat) : pair := default (0, 0) (last (img m f :: fw f (lw m))).

(** A step of thread [t] that changes only its own position. *)
Definition mloc (m : mst) (t : nat) (x : mtst) : mst :=
  MSt (lw m) (img m) (lmk m) (lpw m) (mdr m) (mrec m) (upd (mth m) t x) (mnid m) (mh m).
(** [pwb] of the line by [t]: it records the line's length, whatever fields
    the writes are to. *)
Definition mpwb (m : mst) (t : nat) (x : mtst) : mst :=
  MSt (lw m) (img m) (lmk m) (upd (lpw m) t (length (lw m))) (mdr m) (mrec m) (upd (mth m) t x)
      (mnid m) (mh m).
(** [pfence] by [t]: the line's mark reaches [t]'s write-back. *)
Definition mfence (m : mst) (t : nat) (x : mtst) : mst :=
  MSt (lw m) (img m) (lmk m `max` lpw m t) (upd (lpw m) t 0) (mdr m) (mrec m) (upd (mth m) t x)
      (mnid m) (mh m).
(** A successful DWCAS of field [f]'s DRAM pair to [a]. *)
Definition mcopy (m : mst) (f t : nat) (x : mtst) (a : pair) : mst :=
  MSt (lw m) (img m) (lmk m) (lpw m) (upd (mdr m) f a) (mrec m) (upd (mth m) t x) (mnid m) (mh m).
(** A write of field [f]'s NVMM pair: appended to the line. *)
Definition mwrite (m : mst) (f : nat) (p : pair) (t : nat) (x : mtst) : mst :=
  MSt (lw m ++ [(f, p)]) (img m) (lmk m) (lpw m) (mdr m) (mrec m) (upd (mth m) t x) (mnid m) (mh m).
(** A return of [recover_field] on field [f], DRAM's pair now [a]. *)
Definition mrecov (m : mst) (f t : nat) (x : mtst) (a : pair) : mst :=
  MSt (lw m) (img m) (lmk m) (lpw m) (upd (mdr m) f a) (upd (mrec m) f true) (upd (mth m) t x)
      (mnid m) (mh m).

Section model.
  Context (F : nat) (v0 : nat → nat).

  Inductive mstep : mst → mst → Prop :=
  (* invocation of an operation on field f < F; Rust: the [trace_ev!(off, "Invoke")] of
     Space::track_field (L360–L378) *)
  | m_invoke m t f op :
      mth m t = MIdle → f < F →
      mstep m (MSt (lw m) (img m) (lmk m) (lpw m) (mdr m) (mrec m)
                 (upd (mth m) t (MOp f (mnid m f) op PStart)) (upd (mnid m) f (S (mnid m f)))
                 (mh m ++ [Invoke (oid f (mnid m f)) t (f, op)]))
  (* load: field f's tracking done (f recovered), read f's DRAM (PAtomic::load, tracked_val,
     L198–L209) *)
  | m_load m t f k :
      mth m t = MOp f k OLoad PStart → mrec m f = true →
      mstep m (mloc m t (MOp f k OLoad (PRet (mdr m f).1)))
  (* CAS: tracking done (PAtomic::compare_exchange, L213–L222) *)
  | m_cas0 m t f k e n :
      mth m t = MOp f k (OCas e n) PStart → mrec m f = true →
      mstep m (mloc m t (MOp f k (OCas e n) (PL5 e)))
  (* store: tracking done, first expected value from f's DRAM (PAtomic::store, expected,
     L224–L233) *)
  | m_store0 m t f k v :
      mth m t = MOp f k (OStore v) PStart → mrec m f = true →
      mstep m (mloc m t (MOp f k (OStore v) (PL5 (mdr m f).1)))
  (* return *)
  | m_ret m t f k op r :
      mth m t = MOp f k op (PRet r) →
      mstep m (MSt (lw m) (img m) (lmk m) (lpw m) (mdr m) (mrec m) (upd (mth m) t MIdle) (mnid m)
                 (mh m ++ [Return (oid f k) r]))
  (* L5–L7: read f's NVMM pair (Space::read_nvmm, L412) *)
  | m_l5 m t f k op e :
      mth m t = MOp f k op (PL5 e) → mstep m (mloc m t (MOp f k op (PL9 e (nvf m f))))
  (* L9–L11: read f's DRAM pair (L414); L18: NVMM one write ahead: help (L424) *)
  | m_l9_help m t f k op e p :
      mth m t = MOp f k op (PL9 e p) → p.2 = S (mdr m f).2 →
      mstep m (mloc m t (MOp f k op (PHpwb e p (mdr m f))))
  (* L27: other sequences: retry (L432) *)
  | m_l9_wait m t f k op e p :
      mth m t = MOp f k op (PL9 e p) → p.2 ≠ S (mdr m f).2 → p.2 ≠ (mdr m f).2 →
      mstep m (mloc m t (MOp f k op (PL5 e)))
  (* L30–L33: NVMM holds another value: a CAS returns it (L438) ... *)
  | m_l9_fail_cas m t f k e' n e p :
      mth m t = MOp f k (OCas e' n) (PL9 e p) → p.2 = (mdr m f).2 → p.1 ≠ e →
      mstep m (mloc m t (MOp f k (OCas e' n) (PRet p.1)))
  (* ... a store tries again expecting it (Space::cas_loop, L309–L316) *)
  | m_l9_fail_store m t f k v e p :
      mth m t = MOp f k (OStore v) (PL9 e p) → p.2 = (mdr m f).2 → p.1 ≠ e →
      mstep m (mloc m t (MOp f k (OStore v) (PL5 p.1)))
  (* L30: NVMM holds the expected value: on to L37 *)
  | m_l9_go m t f k op e p :
      mth m t = MOp f k op (PL9 e p) → p.2 = (mdr m f).2 → p.1 = e →
      mstep m (mloc m t (MOp f k op (PL40 e p (mdr m f))))
  (* L19: the helper's write-back of the line (self.pool.pwb(off, 16), L425): every write of
     the line so far, whichever field *)
  | m_hpwb m t f k op e p d :
      mth m t = MOp f k op (PHpwb e p d) → mstep m (mpwb m t (MOp f k op (PHfence e p d)))
  (* L20: its fence (L426) *)
  | m_hfence m t f k op e p d :
      mth m t = MOp f k op (PHfence e p d) → mstep m (mfence m t (MOp f k op (PHcas e p d)))
  (* L24: the helper's DRAM DWCAS of f from [d] to [p] (L427), then retry *)
  | m_hcas_ok m t f k op e p d :
      mth m t = MOp f k op (PHcas e p d) → mdr m f = d → mstep m (mcopy m f t (MOp f k op (PL5 e)) p)
  | m_hcas_fail m t f k op e p d :
      mth m t = MOp f k op (PHcas e p d) → mdr m f ≠ d → mstep m (mloc m t (MOp f k op (PL5 e)))
  (* L37–L40: f's NVMM DWCAS from [p] to [(new, p.2 + 1)] (L443): a write of the line *)
  | m_l40_ok m t f k op e p d :
      mth m t = MOp f k op (PL40 e p d) → nvf m f = p →
      mstep m (mwrite m f (newv op e, S p.2) t (MOp f k op (PW WPwb e p (newv op e, S p.2))))
  (* L46–L47 with the fix of M1: the DWCAS failed, retry from the top (L480–L483) *)
  | m_l40_fail m t f k op e p d :
      mth m t = MOp f k op (PL40 e p d) → nvf m f ≠ p → mstep m (mloc m t (MOp f k op (PL5 e)))
  (* L41, L42: the writer's write-back of the line and fence (L450–L451) *)
  | m_wpwb m t f k op e d a :
      mth m t = MOp f k op (PW WPwb e d a) → mstep m (mpwb m t (MOp f k op (PW WFence e d a)))
  | m_wfence m t f k op e d a :
      mth m t = MOp f k op (PW WFence e d a) → mstep m (mfence m t (MOp f k op (PW WL44 e d a)))
  (* L44: f's DRAM DWCAS from [d] to [a] (L459) *)
  | m_l44_ok m t f k op e d a :
      mth m t = MOp f k op (PW WL44 e d a) → mdr m f = d →
      mstep m (mcopy m f t (MOp f k op (PRet (retv op e))) a)
  | m_l44_fail m t f k op e d a :
      mth m t = MOp f k op (PW WL44 e d a) → mdr m f ≠ d → mstep m (mloc m t (MOp f k op (PW WM2 e d a)))
  (* the fix of M2 (Space::finish_dram_half, L495–L509): read f's DRAM; not [d]: return *)
  | m_m2_diff m t f k op e d a :
      mth m t = MOp f k op (PW WM2 e d a) → mdr m f ≠ d →
      mstep m (mloc m t (MOp f k op (PRet (retv op e))))
  | m_m2_same m t f k op e d a :
      mth m t = MOp f k op (PW WM2 e d a) → mdr m f = d →
      mstep m (mloc m t (MOp f k op (PW WM2cas e d a)))
  | m_m2cas_ok m t f k op e d a :
      mth m t = MOp f k op (PW WM2cas e d a) → mdr m f = d →
      mstep m (mcopy m f t (MOp f k op (PRet (retv op e))) a)
  | m_m2cas_fail m t f k op e d a :
      mth m t = MOp f k op (PW WM2cas e d a) → mdr m f ≠ d →
      mstep m (mloc m t (MOp f k op (PW WM2 e d a)))
  (* a recover_field call on f (Space::recover_field, L586–L604; Space::recover_attempt,
     L523–L583) from f's tracking step: line 1, f's DRAM pair (L524) *)
  | m_late1 m t f k op :
      mth m t = MOp f k op PStart → mstep m (mloc m t (MOp f k op (PRc2 (mdr m f))))
  (* line 2, f's NVMM pair (L527) *)
  | m_late2 m t f k op d :
      mth m t = MOp f k op (PRc2 d) → mstep m (mloc m t (MOp f k op (PRc3 d (nvf m f))))
  (* line 3: equal pairs, return (L530): f is recovered *)
  | m_late3 m t f k op d n :
      mth m t = MOp f k op (PRc3 d n) → n = d → mstep m (mrecov m f t (MOp f k op PStart) (mdr m f))
  (* R2's re-read (L535): DRAM changed, goto 1 *)
  | m_late_reread_fail m t f k op d n :
      mth m t = MOp f k op (PRc3 d n) → n ≠ d → mdr m f ≠ d → mstep m (mloc m t (MOp f k op PStart))
  (* R2's re-read: unchanged; line 4 outside the window (Space::in_window, L514) *)
  | m_late4 m t f k op d n :
      mth m t = MOp f k op (PRc3 d n) → n ≠ d → mdr m f = d → ¬ n.2 < d.2 →
      mstep m (mloc m t (MOp f k op (PRpwb d n)))
  (* line 4 in the window: line 4.1's CAS of f's NVMM sequence word (L546–L570): a write of
     the line *)
  | m_late41_ok m t f k op d n :
      mth m t = MOp f k op (PRc3 d n) → n ≠ d → mdr m f = d → n.2 < d.2 → (nvf m f).2 = n.2 →
      mstep m (mwrite m f ((nvf m f).1, S d.2) t (MOp f k op (PRpwb d (n.1, S d.2))))
  | m_late41_fail m t f k op d n :
      mth m t = MOp f k op (PRc3 d n) → n ≠ d → mdr m f = d → n.2 < d.2 → (nvf m f).2 ≠ n.2 →
      mstep m (mloc m t (MOp f k op PStart))
  (* R1's write-back of the line and fence (L578–L579) *)
  | m_late_pwb m t f k op d n :
      mth m t = MOp f k op (PRpwb d n) → mstep m (mpwb m t (MOp f k op (PRfence d n)))
  | m_late_fence m t f k op d n :
      mth m t = MOp f k op (PRfence d n) → mstep m (mfence m t (MOp f k op (PR5 d n)))
  (* line 5: f's DRAM DWCAS from [d] to [n] (L593): return (f recovered), or goto 1 *)
  | m_late5_ok m t f k op d n :
      mth m t = MOp f k op (PR5 d n) → mdr m f = d → mstep m (mrecov m f t (MOp f k op PStart) n)
  | m_late5_fail m t f k op d n :
      mth m t = MOp f k op (PR5 d n) → mdr m f ≠ d → mstep m (mloc m t (MOp f k op PStart))
  (* an eviction of the line: a longer prefix of its writes is durable *)
  | m_evict m n :
      lmk m ≤ n → n ≤ length (lw m) →
      mstep m (MSt (lw m) (img m) n (lpw m) (mdr m) (mrec m) (mth m) (mnid m) (mh m))
  (* a full crash: NVMM keeps a prefix of the line's writes at least as long as its mark, each
     field's pair its last write there; DRAM holds anything ([space.rs] Space::open, [dram.rs]
     Dram::new with DramInit::Garbage); no field is recovered; the threads are gone *)
  | m_crash m keep d :
      lmk m ≤ keep → keep ≤ length (lw m) →
      mstep m (MSt [] (λ f, default (0, 0) (last (img m f :: fw f (take keep (lw m))))) 0 (λ _, 0) d
                 (λ _, false) (λ _, MIdle) (mnid m) (mh m ++ [Crash])).

  (** A run starts right after a crash that left field [f] the pair
      [(v0 f, q0 f)] and DRAM any pairs [d]. *)
  Definition minit (q0 : nat → nat) (d : nat → pair) : mst :=
    MSt [] (λ f, (v0 f, q0 f)) 0 (λ _, 0) d (λ _, false) (λ _, MIdle) (λ _, 0) [].

  Inductive mreach : mst → Prop :=
  | mreach_init q0 d : mreach (minit q0 d)
  | mreach_step m m' : mreach m → mstep m m' → mreach m'.
End model.

(** ** One field seen alone: a state of [MirrorPxLin.v]'s model *)

(** A thread as field [f] sees it: inside its operation on [f], else idle. *)
Definition pth (f : nat) (x : mtst) : tst :=
  match x with MOp g k op pc => if decide (g = f) then TOp k op pc else TIdle | MIdle => TIdle end.

(** The first [n] writes of the line as field [f] counts them: its
    crash-image pair and its own writes among them. *)
Definition pi (f : nat) (m : mst) (n : nat) : nat := S (length (fw f (take n (lw m)))).

(** The field of an operation id [oid f k]. *)
Definition fld_of (i : opid) : nat := default 0 (fst <$> decode_nat (A:=nat * nat) i).

Lemma fld_of_oid f k : fld_of (oid f k) = f.
Proof. unfold fld_of, oid. by rewrite decode_encode_nat. Qed.

(** The events of field [f] and the crashes, read from the ids. *)
Definition fev (f : nat) (e : event (nat * mop) nat) : Prop :=
  match e with Invoke i _ _ | Return i _ | Recover i _ => fld_of i = f | Crash => True end.
Global Instance fev_dec f e : Decision (fev f e).
Proof. destruct e; simpl; apply _. Defined.

Definition fproj (f : nat) (h : history (nat * mop) nat) : history (nat * mop) nat := filter (fev f) h.

(** A one-field event as an event of field [f]: operation [k] is [oid f k]. *)
Definition lab (f : nat) (e : event mop nat) : event (nat * mop) nat :=
  match e with
  | Invoke i t op => Invoke (oid f i) t (f, op)
  | Return i v => Return (oid f i) v
  | Recover i v => Recover (oid f i) v
  | Crash => Crash
  end.

(** [s], a state of [MirrorPxLin.v]'s model, is field [f] of [m]: its line
    is [f]'s crash-image pair and [f]'s writes; its mark and write-backs
    are at most what the line's cover of [f]'s writes; DRAM, tracking,
    operations as [f]'s; its history, relabelled, is [f]'s part of [m]'s. *)
Record rel (f : nat) (m : mst) (s : st) : Prop := {
  r_ws : ws s = img m f :: fw f (lw m);
  r_mk : mk s ≤ pi f m (lmk m);
  r_pw : ∀ t, pw s t ≤ pi f m (lpw m t);
  r_dr : dr s = mdr m f;
  r_rec : rec s = mrec m f;
  r_th : ∀ t, th s t = pth f (mth m t);
  r_nid : nid s = mnid m f;
  r_hist : lab f <$> hist s = fproj f (mh m);
}.

Lemma fw_app f l1 l2 : fw f (l1 ++ l2) = fw f l1 ++ fw f l2.
Proof. apply omap_app. Qed.

Lemma fw_take_mono f l n n' : n ≤ n' → length (fw f (take n l)) ≤ length (fw f (take n' l)).
Proof.
  intros Hn. rewrite <- (take_drop n (take n' l)), take_take, Nat.min_l by done.
  rewrite fw_app, app_length. lia.
Qed.

Lemma fw_take_app f l l' n : length (fw f (take n l)) ≤ length (fw f (take n (l ++ l'))).
Proof.
  destruct (decide (n ≤ length l)).
  - by rewrite take_app_le.
  - rewrite take_app_ge, take_ge by lia. rewrite fw_app, app_length. lia.
Qed.

Lemma fw_take_le f l n : length (fw f (take n l)) ≤ length (fw f l).
Proof. rewrite <- (take_drop n l) at 2. rewrite fw_app, app_length. lia. Qed.

Lemma pi_mono f m n n' : n ≤ n' → pi f m n ≤ pi f m n'.
Proof. unfold pi. intros. pose proof (fw_take_mono f (lw m) n n'). lia. Qed.

Lemma pth_same f k op pc : pth f (MOp f k op pc) = TOp k op pc.
Proof. simpl. by rewrite decide_True. Qed.

Lemma pth_other f g k op pc : g ≠ f → pth f (MOp g k op pc) = TIdle.
Proof. simpl. intros. by rewrite decide_False. Qed.

Lemma nv_rel f m s : rel f m s → nv s = nvf m f.
Proof. intros Hr. unfold nv, nvf. by rewrite (r_ws _ _ _ Hr). Qed.

Lemma erase_ins_nil o : erase (ins o) = [].
Proof. by destruct o as [[[??]?]|]. Qed.

Lemma hist_app s l : erase (xh s ++ l) = hist s ++ erase l.
Proof. unfold hist. by rewrite erase_app. Qed.

Lemma upd_th_rel f m s t x y :
  (∀ t', th s t' = pth f (mth m t')) → pth f x = y →
  ∀ t', upd (th s) t y t' = pth f (upd (mth m) t x t').
Proof. intros Hth Hx t'. unfold upd. destruct (Nat.eqb t' t); [done | apply Hth]. Qed.

(** *** A step on field [f]: the same step of the one-field model *)

Lemma rel_loc f m s t x y : rel f m s → pth f x = y → rel f (mloc m t x) (sth s t y).
Proof. intros [] Hx. split; try done. by apply upd_th_rel. Qed.

Lemma rel_sxh f m s l : rel f m s → erase l = [] → rel f m (sxh s l).
Proof.
  intros [] Hl. split; try done. unfold hist, sxh in *. cbn [xh].
  by rewrite erase_app, Hl, app_nil_r.
Qed.

Lemma rel_pwb f m s t x y : rel f m s → pth f x = y → rel f (mpwb m t x) (spwb s t y).
Proof.
  intros [] Hx. split; try done; [| by apply upd_th_rel].
  intros t'. simpl. unfold upd. destruct (Nat.eqb t' t); [| apply r_pw0].
  unfold pi; simpl. rewrite take_ge by done. rewrite r_ws0. simpl. lia.
Qed.

Lemma rel_fence f m s t x y : rel f m s → pth f x = y → rel f (mfence m t x) (sfence s t y).
Proof.
  intros [] Hx. split; try done; simpl.
  - pose proof (pi_mono f m (lmk m) (lmk m `max` lpw m t) ltac:(lia)).
    pose proof (pi_mono f m (lpw m t) (lmk m `max` lpw m t) ltac:(lia)).
    specialize (r_pw0 t). unfold pi in *; simpl. lia.
  - intros t'. unfold upd. destruct (Nat.eqb t' t); [lia | apply r_pw0].
  - by apply upd_th_rel.
Qed.

Lemma rel_copy f m s t x y a : rel f m s → pth f x = y → rel f (mcopy m f t x a) (scopy s t y a).
Proof.
  intros [] Hx. split; try done; simpl.
  - by rewrite upd_same.
  - by apply upd_th_rel.
  - unfold hist, scopy in *. cbn [xh]. by rewrite erase_app, erase_ins_nil, app_nil_r.
Qed.

Lemma rel_write f m s t x y p p' xh' o :
  rel f m s → pth f x = y → p' = p → erase xh' = hist s →
  rel f (mwrite m f p t x) (St (ws s ++ [p']) (mk s) (pw s) (dr s) (rec s) (upd (th s) t y) (nid s) xh' o (gd s)).
Proof.
  intros [] Hx -> Hxh. split; simpl; try done.
  - rewrite r_ws0, fw_app. simpl. by rewrite decide_True.
  - pose proof (fw_take_app f (lw m) [(f, p)] (lmk m)). unfold pi in *. simpl. lia.
  - intros t'. pose proof (fw_take_app f (lw m) [(f, p)] (lpw m t')). specialize (r_pw0 t').
    unfold pi in *. simpl. lia.
  - by apply upd_th_rel.
  - unfold hist in *. simpl. by rewrite Hxh.
Qed.

Lemma rel_recov f m s t x y a a' xh' o :
  rel f m s → pth f x = y → a' = a → erase xh' = hist s →
  rel f (mrecov m f t x a) (St (ws s) (mk s) (pw s) a' true (upd (th s) t y) (nid s) xh' o (gd s)).
Proof.
  intros [] Hx -> Hxh. split; simpl; try done.
  - by rewrite upd_same.
  - by rewrite upd_same.
  - by apply upd_th_rel.
  - unfold hist in *. simpl. by rewrite Hxh.
Qed.

(** *** A step on another field: no step of the one-field model *)

Lemma rel_stutter f m m' s :
  rel f m s →
  img m' f = img m f → fw f (lw m') = fw f (lw m) →
  (∀ n, length (fw f (take n (lw m))) ≤ length (fw f (take n (lw m')))) → lmk m ≤ lmk m' →
  (∀ t, pw s t ≤ pi f m' (lpw m' t)) →
  mdr m' f = mdr m f → mrec m' f = mrec m f →
  (∀ t, pth f (mth m' t) = pth f (mth m t)) → mnid m' f = mnid m f →
  fproj f (mh m') = fproj f (mh m) → rel f m' s.
Proof.
  intros [] Himg Hfw Htk Hmk Hpw Hdr Hrec Hth Hnid Hh.
  split; [congruence | | apply Hpw | congruence | congruence | | congruence | congruence].
  - pose proof (pi_mono f m (lmk m) (lmk m') Hmk). specialize (Htk (lmk m')). unfold pi in *. lia.
  - intros t. by rewrite r_th0, Hth.
Qed.

Lemma upd_pth_other f m t x :
  pth f (mth m t) = TIdle → pth f x = TIdle → ∀ t', pth f (upd (mth m) t x t') = pth f (mth m t').
Proof. intros H1 H2 t'. unfold upd. destruct (Nat.eqb t' t) eqn:E; [| done]. apply Nat.eqb_eq in E. subst. congruence. Qed.

Lemma rel_loc_o f m s t x :
  rel f m s → pth f (mth m t) = TIdle → pth f x = TIdle → rel f (mloc m t x) s.
Proof.
  intros Hr H1 H2. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia | simpl; lia | apply Hr
    | done | done | by apply upd_pth_other | done | done].
Qed.

Lemma rel_pwb_o f m s t x :
  rel f m s → pth f (mth m t) = TIdle → pth f x = TIdle → rel f (mpwb m t x) s.
Proof.
  intros Hr H1 H2. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia | simpl; lia | 
    | done | done | by apply upd_pth_other | done | done].
  intros t'. simpl. unfold upd. destruct (Nat.eqb t' t); [| apply Hr].
  pose proof (r_pw _ _ _ Hr t'). pose proof (fw_take_le f (lw m) (lpw m t')).
  unfold pi in *. simpl. rewrite take_ge by done. lia.
Qed.

Lemma rel_fence_o f m s t x :
  rel f m s → pth f (mth m t) = TIdle → pth f x = TIdle → (th s t = TIdle → pw s t = 0) →
  rel f (mfence m t x) s.
Proof.
  intros Hr H1 H2 Hpw. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia | simpl; lia |
    | done | done | by apply upd_pth_other | done | done].
  intros t'. simpl. unfold upd. destruct (Nat.eqb t' t) eqn:E; [| apply Hr].
  apply Nat.eqb_eq in E. subst. rewrite Hpw; [lia |]. by rewrite (r_th _ _ _ Hr).
Qed.

Lemma rel_copy_o f g m s t x a :
  rel f m s → g ≠ f → pth f (mth m t) = TIdle → pth f x = TIdle → rel f (mcopy m g t x a) s.
Proof.
  intros Hr Hg H1 H2. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia | simpl; lia | apply Hr
    | | done | by apply upd_pth_other | done | done].
  simpl. by rewrite upd_other.
Qed.

Lemma rel_write_o f g m s p t x :
  rel f m s → g ≠ f → pth f (mth m t) = TIdle → pth f x = TIdle → rel f (mwrite m g p t x) s.
Proof.
  intros Hr Hg H1 H2. eapply rel_stutter; [exact Hr | done | | | simpl; lia | | done | done
    | by apply upd_pth_other | done | done].
  - simpl. rewrite fw_app. simpl. rewrite decide_False by done. by rewrite app_nil_r.
  - intros n. apply fw_take_app.
  - intros t'. pose proof (r_pw _ _ _ Hr t'). pose proof (fw_take_app f (lw m) [(g, p)] (lpw m t')).
    unfold pi in *. simpl. lia.
Qed.

Lemma rel_recov_o f g m s t x a :
  rel f m s → g ≠ f → pth f (mth m t) = TIdle → pth f x = TIdle → rel f (mrecov m g t x a) s.
Proof.
  intros Hr Hg H1 H2. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia | simpl; lia | apply Hr
    | | | by apply upd_pth_other | done | done].
  all: simpl; by rewrite upd_other.
Qed.

(** *** Every step *)

Lemma idle_pw v s t : reach v s → th s t = TIdle → pw s t = 0.
Proof. intros Hs Ht. pose proof (g_th _ _ (reach_ginv _ _ Hs) t) as H. unfold tinv in H. by rewrite Ht in H. Qed.

Lemma sim_th f m s t k op pc : rel f m s → mth m t = MOp f k op pc → th s t = TOp k op pc.
Proof. intros Hr H. by rewrite (r_th _ _ _ Hr), H, pth_same. Qed.

Lemma fproj_snoc_in f h e : fev f e → fproj f (h ++ [e]) = fproj f h ++ [e].
Proof. intros He. unfold fproj. rewrite filter_app. simpl. by rewrite filter_cons_True. Qed.

Lemma fproj_snoc_out f h e : ¬ fev f e → fproj f (h ++ [e]) = fproj f h.
Proof. intros He. unfold fproj. rewrite filter_app. simpl. rewrite filter_cons_False by done. by rewrite app_nil_r. Qed.

Lemma hist_snoc_rel f s h e :
  lab f <$> hist s = fproj f h → fev f (lab f e) → lab f <$> erase (xh s ++ [XE e]) = fproj f (h ++ [lab f e]).
Proof. intros Hh He. rewrite fproj_snoc_in by done. rewrite erase_app, fmap_app. simpl. by rewrite <- Hh. Qed.

Lemma lookup_last_app (x : pair) l1 l2 : (x :: l1 ++ l2) !! length l1 = Some (default (0, 0) (last (x :: l1))).
Proof. revert x. induction l1 as [| y l1 IH]; intros x; [done |]. simpl. apply IH. Qed.

Local Ltac sim_fin Hr :=
  first [ apply rel_loc | apply rel_pwb | apply rel_fence | apply rel_copy
        | apply rel_sxh; [apply rel_loc | reflexivity] | apply rel_write | apply rel_recov ];
  first [ exact Hr | rewrite pth_same, ?(r_dr _ _ _ Hr), ?(nv_rel _ _ _ Hr); reflexivity
        | rewrite ?(r_dr _ _ _ Hr), ?(nv_rel _ _ _ Hr); reflexivity
        | unfold hist; by rewrite erase_app, erase_ins_nil, app_nil_r ].

Local Ltac sim_oth Hr Hs H Hne :=
  first [ apply rel_loc_o | apply rel_pwb_o | apply rel_fence_o | apply rel_copy_o | apply rel_write_o
        | apply rel_recov_o ];
  first [ exact Hr | exact Hne | rewrite H; by apply pth_other | by apply pth_other
        | intros; by eapply idle_pw ].

(** A step of thread [t] on field [g]: for [g = f] the one-field model's
    step [c], else none. *)
Local Ltac sim c :=
  lazymatch goal with
  | Hr : rel ?f ?m ?s, Hs : reach _ ?s, H : mth ?m _ = MOp ?g _ _ _ |- _ =>
    destruct (decide (g = f)) as [<-|Hne];
    [ eexists; split;
      [ eapply reach_step; [exact Hs | eapply c; [eapply sim_th; [exact Hr | exact H] | ..];
          rewrite ?(r_dr _ _ _ Hr), ?(r_rec _ _ _ Hr), ?(nv_rel _ _ _ Hr); eassumption ]
      | sim_fin Hr ]
    | exists s; split; [exact Hs | sim_oth Hr Hs H Hne] ]
  end.

Section sim.
  Context (F : nat) (v0 : nat → nat).

  Lemma rel_step f m m' s : rel f m s → reach (v0 f) s → mstep F m m' → ∃ s', reach (v0 f) s' ∧ rel f m' s'.
  Proof.
    intros Hr Hs Hst. destruct Hst.
    - (* invoke *)
      rename f0 into g. destruct (decide (g = f)) as [<-|Hne].
      + eexists; split.
        { eapply reach_step; [exact Hs |]. apply s_invoke. by rewrite (r_th _ _ _ Hr), H. }
        destruct Hr. split; simpl; try done.
        * apply upd_th_rel; [done |]. by rewrite pth_same, r_nid0.
        * by rewrite upd_same, r_nid0.
        * rewrite r_nid0. apply (hist_snoc_rel g s (mh m) (Invoke (mnid m g) t op)); [done |].
          apply fld_of_oid.
      + exists s. split; [done |]. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia
          | simpl; lia | apply Hr | done | done | | | ].
        * apply upd_pth_other; [by rewrite H | by apply pth_other].
        * simpl. by rewrite upd_other.
        * simpl. rewrite fproj_snoc_out; [done |]. simpl. by rewrite fld_of_oid.
    - sim s_load.
    - sim s_cas0.
    - sim s_store0.
    - (* return *)
      rename f0 into g. destruct (decide (g = f)) as [<-|Hne].
      + eexists; split.
        { eapply reach_step; [exact Hs |]. apply (s_ret _ t k op r). by eapply sim_th. }
        pose proof (rel_loc _ _ _ t MIdle TIdle Hr eq_refl) as [].
        split; simpl; try done.
        unfold sxh, sth. simpl. apply (hist_snoc_rel g _ (mh m) (Return k r)); [done |]. apply fld_of_oid.
      + exists s. split; [done |]. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia
          | simpl; lia | apply Hr | done | done | | done | ].
        * apply upd_pth_other; [by rewrite H, pth_other | done].
        * simpl. rewrite fproj_snoc_out; [done |]. simpl. by rewrite fld_of_oid.
    - sim s_l5.
    - sim s_l9_help.
    - sim s_l9_wait.
    - sim s_l9_fail_cas.
    - sim s_l9_fail_store.
    - sim s_l9_go.
    - sim s_hpwb.
    - sim s_hfence.
    - sim s_hcas_ok.
    - sim s_hcas_fail.
    - sim s_l40_ok.
    - sim s_l40_fail.
    - sim s_wpwb.
    - sim s_wfence.
    - sim s_l44_ok.
    - sim s_l44_fail.
    - sim s_m2_diff.
    - sim s_m2_same.
    - sim s_m2cas_ok.
    - sim s_m2cas_fail.
    - sim s_late1.
    - sim s_late2.
    - sim s_late3.
    - sim s_late_reread_fail.
    - sim s_late4.
    - sim s_late41_ok.
    - sim s_late41_fail.
    - sim s_late_pwb.
    - sim s_late_fence.
    - sim s_late5_ok.
    - sim s_late5_fail.
    - (* eviction *)
      exists s. split; [done |]. eapply rel_stutter; [exact Hr | done | done | intros; simpl; lia
        | simpl; lia | apply Hr | done | done | done | done | done].
    - (* crash *)
      assert (Hk : mk s ≤ pi f m keep).
      { pose proof (r_mk _ _ _ Hr). pose proof (pi_mono f m _ _ H). lia. }
      assert (Hl : pi f m keep ≤ length (ws s)).
      { rewrite (r_ws _ _ _ Hr). unfold pi. simpl. pose proof (fw_take_le f (lw m) keep). lia. }
      eexists; split.
      { eapply reach_step; [exact Hs |]. apply (s_crash _ (pi f m keep) (d f)); [done | done | unfold pi; lia]. }
      destruct Hr. split; simpl; try done.
      + assert (E : fw f (lw m) = fw f (take keep (lw m)) ++ fw f (drop keep (lw m)))
          by (by rewrite <- fw_app, take_drop).
        rewrite r_ws0, E. unfold pi. simpl pred. by rewrite lookup_last_app.
      + unfold pi. simpl. lia.
      + unfold hist. cbn [xh]. rewrite !erase_app, fproj_snoc_in by done. rewrite <- r_hist0.
        case_decide; rewrite ?erase_ins_nil; simpl; rewrite fmap_app; reflexivity.
  Qed.
End sim.

(** ** Every run, seen from each field, is a run of the one-field model *)

Lemma rel_init v0 f q0 d : rel f (minit v0 q0 d) (init (v0 f) (q0 f) (d f)).
Proof. split; simpl; try done; unfold pi; simpl; lia. Qed.

Section runs.
  Context (F : nat) (v0 : nat → nat).

  (** Field [f] of every reachable state is a reachable state of
      [MirrorPxLin.v]'s model from [f]'s crash-image value [v0 f]. *)
  Theorem mirror_px_fields_sim m : mreach F v0 m → ∀ f, ∃ s, reach (v0 f) s ∧ rel f m s.
  Proof.
    induction 1 as [q0 d | m m' _ IH Hst]; intros f.
    - exists (init (v0 f) (q0 f) (d f)). split; [apply reach_init | apply rel_init].
    - destruct (IH f) as (s & Hs & Hr). by eapply rel_step.
  Qed.
End runs.

(** ** Relabelling a one-field history as field [f]'s *)

Definition xlab (f : nat) (x : xev) : xevent (nat * mop) nat :=
  match x with XE e => XE (lab f e) | XL i op v => XL (oid f i) (f, op) v end.

Lemma erase_xlab f (l : list xev) : erase (xlab f <$> l) = lab f <$> erase l.
Proof.
  induction l as [| x l IH]; [done |]. rewrite fmap_cons.
  change (x :: l) with ([x] ++ l). change (xlab f x :: (xlab f <$> l)) with ([xlab f x] ++ (xlab f <$> l)).
  rewrite !erase_app, fmap_app, IH. by destruct x.
Qed.

Lemma unlabel_xlab f (l : list xev) : unlabel (effects (points (xlab f <$> l))) = effects (points l).
Proof. induction l as [| [e | i op v] l IH]; [done | |]; simpl; [exact IH | f_equal; exact IH]. Qed.

Lemma lin_points_lab (S : nat → seq_spec nat mop nat) f h (l : list xev) :
  lin_points (S f) h l → lin_points (obj_spec S f) (lab f <$> h) (xlab f <$> l).
Proof.
  intros [He Hok Hacc]. split.
  - by rewrite erase_xlab, He.
  - intros l1 x l2 E. apply fmap_app_inv in E as (k1 & k2 & -> & E2 & ->).
    symmetry in E2. apply fmap_cons_inv in E2 as (y & k2' & -> & -> & ->).
    specialize (Hok k1 y k2' eq_refl).
    destruct y as [[i t op | i v | | i v] | i op v]; simpl in *; try done.
    + destruct Hok as [op Hin]. exists (f, op). apply elem_of_list_fmap. by exists (XL i op v).
    + destruct Hok as [op Hin]. exists (f, op). apply elem_of_list_fmap. by exists (XL i op v).
    + destruct Hok as [[t Hin] Hnot]. split.
      * exists t. rewrite erase_xlab. apply elem_of_list_fmap. by exists (Invoke i t op).
      * intros op' v' (y & Ey & Hy)%elem_of_list_fmap. destruct y as [? | i' op'' v'']; simpl in Ey; [done |].
        injection Ey as Ei _ _. apply oid_inj in Ei as [_ ->]. by apply (Hnot op'' v'').
  - unfold accepts. apply (proj2 (runs_obj_spec S f _ _)). simpl. by rewrite unlabel_xlab.
Qed.

(** ** The histories are well formed *)

(** The field and number of a thread's operation. *)
Definition mid (x : mtst) : option (nat * nat) := match x with MIdle => None | MOp g k _ _ => Some (g, k) end.

Lemma mstep_cases F m m' : mstep F m m' →
  (mh m' = mh m ∧ mnid m' = mnid m ∧ ∀ t, mid (mth m' t) = mid (mth m t)) ∨
  (∃ t g op, mth m t = MIdle ∧ mh m' = mh m ++ [Invoke (oid g (mnid m g)) t (g, op)] ∧
     mnid m' = upd (mnid m) g (S (mnid m g)) ∧
     ∀ t', mid (mth m' t') = if Nat.eqb t' t then Some (g, mnid m g) else mid (mth m t')) ∨
  (∃ t g k op r, mth m t = MOp g k op (PRet r) ∧ mh m' = mh m ++ [Return (oid g k) r] ∧ mnid m' = mnid m ∧
     ∀ t', mid (mth m' t') = if Nat.eqb t' t then None else mid (mth m t')) ∨
  (mh m' = mh m ++ [Crash] ∧ mnid m' = mnid m ∧ ∀ t, mth m' t = MIdle).
Proof.
  destruct 1.
  all: try solve [left; split_and!; [reflexivity | reflexivity |];
    intros t'; unfold mloc, mpwb, mfence, mcopy, mwrite, mrecov; simpl; unfold upd;
    destruct (Nat.eqb t' t) eqn:E; [apply Nat.eqb_eq in E; subst; by rewrite H | reflexivity]].
  - right; left. exists t, f, op. split_and!; try done. intros t'. simpl. unfold upd. by destruct (Nat.eqb t' t).
  - right; right; left. exists t, f, k, op, r. split_and!; try done. intros t'. simpl. unfold upd.
    by destruct (Nat.eqb t' t).
  - left. by split_and!.
  - right; right; right. by split_and!.
Qed.

Lemma pending_on_thread {Op Val} (h : history Op Val) t t' i : wf h → pending_on h t i → pending_on h t' i → t = t'.
Proof.
  intros Hwf (h1 & h2 & o & -> & _) (h1' & h2' & o' & E & _).
  apply (wf_invoke_agree (h1 ++ Invoke i t o :: h2) i t o t' o'); [done | |].
  - apply elem_of_app. right. by left.
  - rewrite E. apply elem_of_app. right. by left.
Qed.

Record minv (m : mst) : Prop := {
  mw_wf : wf (mh m);
  mw_inv : ∀ i t g op, Invoke i t (g, op) ∈ mh m → ∃ k, i = oid g k ∧ k < mnid m g;
  mw_pend : ∀ t j, pending_on (mh m) t j → ∃ g k, mid (mth m t) = Some (g, k) ∧ j = oid g k;
  mw_act : ∀ t g k, mid (mth m t) = Some (g, k) →
             pending_on (mh m) t (oid g k) ∧ ∀ v, Return (oid g k) v ∉ mh m;
  mw_norec : ∀ i v, Recover i v ∉ mh m;
}.

Lemma minv_init v0 q0 d : minv (minit v0 q0 d).
Proof.
  split; simpl; try done.
  - apply wf_nil.
  - by intros ???? ?%elem_of_nil.
  - by intros t j (h1 & h2 & op & Eh & _); destruct h1.
  - by intros ?? ?%elem_of_nil.
Qed.

Lemma minv_step F m m' : minv m → mstep F m m' → minv m'.
Proof.
  intros [Hwf Hinv Hpend Hact Hnorec] Hst.
  destruct (mstep_cases F m m' Hst) as
    [(Eh & En & Et)|[(t & g & op & Ht & Eh & En & Et)|[(t & g & k & op & r & Ht & Eh & En & Et)|(Eh & En & Et)]]].
  - split; rewrite ?Eh, ?En; try done.
    + intros t j ?. rewrite Et. by apply Hpend.
    + intros t g k. rewrite Et. apply Hact.
  - assert (Hfresh : ¬ invoked (mh m) (oid g (mnid m g))).
    { intros (t' & [g' op'] & Hin). destruct (Hinv _ _ _ _ Hin) as (k' & Ek & Hk).
      apply oid_inj in Ek as [E1 E2]. subst. lia. }
    split; rewrite ?Eh.
    + apply wf_snoc. split; [done |]. split; [done |].
      intros [j (g' & k' & Hm & _)%Hpend]. by rewrite Ht in Hm.
    + intros i' t' g' op' [Hin | Hin%elem_of_list_singleton]%elem_of_app.
      * destruct (Hinv _ _ _ _ Hin) as (k' & -> & Hk). exists k'. split; [done |].
        rewrite En. unfold upd. destruct (Nat.eqb g' g) eqn:E; [| done]. apply Nat.eqb_eq in E. subst. lia.
      * injection Hin as -> -> -> ->. exists (mnid m g). rewrite En, upd_same. split; [done | lia].
    + intros t' j [(o & Ho) | (Hp & _ & _)]%pending_on_snoc.
      * injection Ho as E1 E2 _. subst. exists g, (mnid m g). rewrite Et, Nat.eqb_refl. done.
      * destruct (Hpend _ _ Hp) as (g' & k' & Hm & ->). exists g', k'. rewrite Et.
        destruct (Nat.eqb t' t) eqn:E; [| done]. apply Nat.eqb_eq in E. subst. by rewrite Ht in Hm.
    + intros t' g' k' Hm. rewrite Et in Hm. destruct (Nat.eqb t' t) eqn:E.
      * injection Hm as <- <-. apply Nat.eqb_eq in E. subst. split.
        -- apply pending_on_snoc. left. by eexists.
        -- intros v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [| done].
           apply Hfresh. by eapply wf_return_invoked.
      * destruct (Hact _ _ _ Hm) as [Hp Hr]. split.
        -- apply pending_on_snoc. right. split_and!; [done | done | by intros v].
        -- intros v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hr v) | done].
    + intros i' v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i' v) | done].
  - destruct (Hact t g k) as [Hp Hr]; [by rewrite Ht |].
    split; rewrite ?Eh.
    + apply wf_snoc. split; [done |]. split; [by exists t |].
      intros [[v ?]|[v ?]]; [by apply (Hr v) | by apply (Hnorec (oid g k) v)].
    + rewrite En. intros i' t' g' op' [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by eapply Hinv | done].
    + intros t' j [(o & Ho) | (Hp' & _ & Hne)]%pending_on_snoc; [done |].
      destruct (Hpend _ _ Hp') as (g' & k' & Hm & ->). exists g', k'. rewrite Et.
      destruct (Nat.eqb t' t) eqn:E; [| done]. apply Nat.eqb_eq in E. subst. rewrite Ht in Hm.
      injection Hm as -> ->. exfalso. by apply (Hne r).
    + intros t' g' k' Hm. rewrite Et in Hm. destruct (Nat.eqb t' t) eqn:E; [done |].
      apply Nat.eqb_neq in E. destruct (Hact _ _ _ Hm) as [Hp' Hr'].
      assert (Hne : oid g' k' ≠ oid g k).
      { intros Eq. rewrite Eq in Hp'. apply E. symmetry. by apply (pending_on_thread (mh m) t t' (oid g k)). }
      split.
      * apply pending_on_snoc. right. split_and!; [done | done | intros v [=]; congruence].
      * intros v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hr' v) | injection Hin; congruence].
    + intros i' v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i' v) | done].
  - split; rewrite ?Eh.
    + apply wf_snoc. by split.
    + rewrite En. intros i' t' g' op' [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by eapply Hinv | done].
    + intros t' j [(o & Ho) | (_ & Hc & _)]%pending_on_snoc; done.
    + intros t' g' k'. by rewrite Et.
    + intros i' v [Hin | Hin%elem_of_list_singleton]%elem_of_app; [by apply (Hnorec i' v) | done].
Qed.

Lemma minv_reach F v0 m : mreach F v0 m → minv m.
Proof. induction 1; [apply minv_init | by eapply minv_step]. Qed.

(** The projection of [Core/History.v] ([h |_ f], by the objects of the
    invokes) is the one read from the ids ([fproj]). *)
Lemma filter_in_iff {A} (P Q : A → Prop) `{∀ x, Decision (P x)} `{∀ x, Decision (Q x)} (l : list A) :
  (∀ x, x ∈ l → P x ↔ Q x) → filter P l = filter Q l.
Proof.
  induction l as [| x l IH]; intros Hx; [done |]. rewrite !filter_cons.
  assert (filter P l = filter Q l) as -> by (apply IH; intros y Hy; apply Hx; by right).
  pose proof (Hx x ltac:(by left)). repeat case_decide; naive_solver.
Qed.

Lemma project_fproj m f : minv m → mh m |_ f = fproj f (mh m).
Proof.
  intros Hw. unfold project, project_with, fproj. apply filter_in_iff.
  assert (Hobj : ∀ i, invoked (mh m) i → obj_of (mh m) i = Some (fld_of i)).
  { intros i (t & [g op] & Hin). rewrite (obj_of_invoke _ i t g op (mw_wf _ Hw) Hin).
    destruct (mw_inv _ Hw _ _ _ _ Hin) as (k & -> & _). by rewrite fld_of_oid. }
  intros [i t [g op] | i v | | i v] Hin; simpl.
  - rewrite Hobj by (by exists t, (g, op)). split; [by intros [=] | by intros ->].
  - rewrite Hobj by (by apply (wf_return_invoked _ i v (mw_wf _ Hw) Hin)). split; [by intros [=] | by intros ->].
  - done.
  - by apply (mw_norec _ Hw) in Hin.
Qed.

(** ** Every run's history is durably linearizable for the product of
    the fields' registers *)

Section main.
  Context (F : nat) (v0 : nat → nat).

  (** Every run's history is well formed (HISTORY.md's rules, [History.wf]). *)
  Theorem mirror_px_fields_wf m : mreach F v0 m → wf (mh m).
  Proof. intros Hm. apply (minv_reach F v0 m Hm). Qed.

  (** Every run's history, over all fields of the line, with its crashes,
      is durably linearizable for F registers side by side, field [f]'s
      starting at its crash-image value [v0 f]. *)
  Theorem mirror_px_fields_durably_linearizable m :
    mreach F v0 m → durably_linearizable (prod_spec (λ f, reg (v0 f))) (mh m).
  Proof.
    intros Hm. pose proof (minv_reach F v0 m Hm) as Hw.
    apply (durably_linearizable_local (λ f, reg (v0 f))); [apply Hw |].
    intros f. destruct (mirror_px_fields_sim F v0 m Hm f) as (s & Hs & Hr).
    rewrite project_fproj by done. rewrite <- (r_hist _ _ _ Hr).
    exists (xlab f <$> xh s). apply (lin_points_lab (λ f, reg (v0 f))). by apply mirror_px_lin_points.
  Qed.
End main.

(** ** Not vacuous: a write-back for field 0 makes field 1's write durable *)

Ltac mcur R := match type of R with mreach _ _ ?x => x end.
Ltac mgo R T :=
  let R0 := fresh "R" in pose proof (mreach_step _ _ _ _ R T) as R0; clear R; rename R0 into R;
  match type of R with mreach ?F ?v ?x => let y := eval vm_compute in x in change (mreach F v y) in R end.
Ltac rcur Q := match type of Q with rtc _ _ ?x => x end.
Ltac rgo Q T :=
  let Q0 := fresh "Q" in pose proof (rtc_r _ _ _ Q T) as Q0; clear Q; rename Q0 into Q;
  match type of Q with rtc ?R ?a ?x => let y := eval vm_compute in x in change (rtc R a y) in Q end.

Lemma mreach_rtc F v0 m m' : mreach F v0 m → rtc (mstep F) m m' → mreach F v0 m'.
Proof. intros Hm Hr. induction Hr as [| m1 m2 m3 Hs _ IH]; [done |]. apply IH. by eapply mreach_step. Qed.

(** The history of the run below: thread 0's CAS(0, 7) on field 1 is
    cut off by a crash, thread 1's CAS(0, 5) on field 0 returns 0 (it
    succeeded) before the crash, and after it thread 0's load of field 1
    returns 7. *)
Definition fields_hist : history (nat * mop) nat :=
  [Invoke (oid 1 0) 0 (1, OCas 0 7); Invoke (oid 0 0) 1 (0, OCas 0 5); Return (oid 0 0) 0; Crash;
   Invoke (oid 1 1) 0 (1, OLoad); Return (oid 1 1) 7].

Lemma mirror_px_fields_not_vacuous_run :
  ∃ m m', mreach 2 (λ _, 0) m ∧
    lw m = [(1, (7, 1)); (0, (5, 1))] ∧ lmk m = 2 ∧
    mth m 0 = MOp 1 0 (OCas 0 7) (PW WPwb 0 (0, 0) (7, 1)) ∧ lpw m 0 = 0 ∧
    rtc (mstep 2) m m' ∧ mh m' = fields_hist.
Proof.
  pose proof (mreach_init 2 (λ _, 0) (λ _, 0) (λ _, (0, 0))) as R.
  match type of R with mreach ?F ?v ?x => let y := eval vm_compute in x in change (mreach F v y) in R end.
  (* thread 0 invokes CAS(0, 7) on field 1; its recover_field: line 1, line 2, line 3 (DRAM equals
     NVMM); the CAS: L5, L9, L40 writes field 1's NVMM pair (7, 1) into the line, and stops *)
  let x := mcur R in mgo R (m_invoke 2 x 0 1 (OCas 0 7) eq_refl ltac:(lia)).
  let x := mcur R in mgo R (m_late1 2 x 0 1 0 (OCas 0 7) eq_refl).
  let x := mcur R in mgo R (m_late2 2 x 0 1 0 (OCas 0 7) (0, 0) eq_refl).
  let x := mcur R in mgo R (m_late3 2 x 0 1 0 (OCas 0 7) (0, 0) (0, 0) eq_refl eq_refl).
  let x := mcur R in mgo R (m_cas0 2 x 0 1 0 0 7 eq_refl eq_refl).
  let x := mcur R in mgo R (m_l5 2 x 0 1 0 (OCas 0 7) 0 eq_refl).
  let x := mcur R in mgo R (m_l9_go 2 x 0 1 0 (OCas 0 7) 0 (0, 0) eq_refl eq_refl eq_refl).
  let x := mcur R in mgo R (m_l40_ok 2 x 0 1 0 (OCas 0 7) 0 (0, 0) (0, 0) eq_refl eq_refl).
  (* thread 1 invokes CAS(0, 5) on field 0; recover_field returns at line 3; L5, L9, L40 writes
     field 0's pair (5, 1) after field 1's; L41 writes the line back, L42 fences: the mark covers
     both writes; L44; return *)
  let x := mcur R in mgo R (m_invoke 2 x 1 0 (OCas 0 5) eq_refl ltac:(lia)).
  let x := mcur R in mgo R (m_late1 2 x 1 0 0 (OCas 0 5) eq_refl).
  let x := mcur R in mgo R (m_late2 2 x 1 0 0 (OCas 0 5) (0, 0) eq_refl).
  let x := mcur R in mgo R (m_late3 2 x 1 0 0 (OCas 0 5) (0, 0) (0, 0) eq_refl eq_refl).
  let x := mcur R in mgo R (m_cas0 2 x 1 0 0 0 5 eq_refl eq_refl).
  let x := mcur R in mgo R (m_l5 2 x 1 0 0 (OCas 0 5) 0 eq_refl).
  let x := mcur R in mgo R (m_l9_go 2 x 1 0 0 (OCas 0 5) 0 (0, 0) eq_refl eq_refl eq_refl).
  let x := mcur R in mgo R (m_l40_ok 2 x 1 0 0 (OCas 0 5) 0 (0, 0) (0, 0) eq_refl eq_refl).
  let x := mcur R in mgo R (m_wpwb 2 x 1 0 0 (OCas 0 5) 0 (0, 0) (5, 1) eq_refl).
  let x := mcur R in mgo R (m_wfence 2 x 1 0 0 (OCas 0 5) 0 (0, 0) (5, 1) eq_refl).
  let x := mcur R in mgo R (m_l44_ok 2 x 1 0 0 (OCas 0 5) 0 (0, 0) (5, 1) eq_refl eq_refl).
  let x := mcur R in mgo R (m_ret 2 x 1 0 0 (OCas 0 5) 0 eq_refl).
  let x := mcur R in pose proof (rtc_refl (mstep 2) x) as Q.
  (* a crash keeping exactly the mark's prefix: both writes *)
  let x := rcur Q in rgo Q (m_crash 2 x 2 (λ _, (0, 0)) ltac:(vm_compute; lia) ltac:(vm_compute; lia)).
  (* thread 0 invokes a load of field 1; its recover_field: line 1 reads DRAM's garbage (0, 0),
     line 2 NVMM's (7, 1), R2's re-read, line 4 outside the window, R1's write-back and fence,
     line 5; the load reads 7 *)
  let x := rcur Q in rgo Q (m_invoke 2 x 0 1 OLoad eq_refl ltac:(lia)).
  let x := rcur Q in rgo Q (m_late1 2 x 0 1 1 OLoad eq_refl).
  let x := rcur Q in rgo Q (m_late2 2 x 0 1 1 OLoad (0, 0) eq_refl).
  let x := rcur Q in rgo Q (m_late4 2 x 0 1 1 OLoad (0, 0) (7, 1) eq_refl ltac:(discriminate) eq_refl ltac:(simpl; lia)).
  let x := rcur Q in rgo Q (m_late_pwb 2 x 0 1 1 OLoad (0, 0) (7, 1) eq_refl).
  let x := rcur Q in rgo Q (m_late_fence 2 x 0 1 1 OLoad (0, 0) (7, 1) eq_refl).
  let x := rcur Q in rgo Q (m_late5_ok 2 x 0 1 1 OLoad (0, 0) (7, 1) eq_refl eq_refl).
  let x := rcur Q in rgo Q (m_load 2 x 0 1 1 eq_refl eq_refl).
  let x := rcur Q in rgo Q (m_ret 2 x 0 1 1 OLoad 7 eq_refl).
  eexists _, _. split; [exact R |]. split_and!; [reflexivity .. | exact Q | reflexivity].
Qed.

(** Field 1's CAS wrote NVMM (L40) and its thread issued no write-back
    (it is before L41, no write-back pending); field 0's CAS wrote the
    line after it, wrote the line back and fenced: the line's mark covers
    field 1's write, so EVERY crash from that state keeps it (field 1's
    pair in the crash image, as [m_crash] computes it, is [(7, 1)]).  The
    run goes on with such a crash and field 1's recovery, and its load of
    field 1 returns 7; the history is durably linearizable for the two
    registers (both starting at 0), and field 1's CAS is cut off. *)
Theorem mirror_px_fields_not_vacuous :
  (∃ m m', mreach 2 (λ _, 0) m ∧
     lw m = [(1, (7, 1)); (0, (5, 1))] ∧ lmk m = 2 ∧
     mth m 0 = MOp 1 0 (OCas 0 7) (PW WPwb 0 (0, 0) (7, 1)) ∧ lpw m 0 = 0 ∧
     (∀ keep, lmk m ≤ keep → keep ≤ length (lw m) →
        default (0, 0) (last (img m 1 :: fw 1 (take keep (lw m)))) = (7, 1)) ∧
     rtc (mstep 2) m m' ∧ mh m' = fields_hist) ∧
  durably_linearizable (prod_spec (λ _ : nat, reg 0)) fields_hist ∧ cut_off fields_hist (oid 1 0).
Proof.
  destruct mirror_px_fields_not_vacuous_run as (m & m' & Hm & Hlw & Hmk & Hth & Hpw & Hr & Hh).
  split; [| split].
  - exists m, m'. split_and!; try done.
    intros keep H1 H2. rewrite Hlw, Hmk in *. simpl in H2. assert (keep = 2) as -> by lia.
    simpl. reflexivity.
  - rewrite <- Hh. apply (mirror_px_fields_durably_linearizable 2 (λ _, 0)). by eapply mreach_rtc.
  - exists [], [Invoke (oid 0 0) 1 (0, OCas 0 5); Return (oid 0 0) 0], [Invoke (oid 1 1) 0 (1, OLoad); Return (oid 1 1) 7], 0, (1, OCas 0 7).
    split; [done |]. intros v. vm_compute. intros Hin. apply elem_of_cons in Hin as [Hin | Hin]; [done |].
    apply elem_of_cons in Hin as [Hin | Hin]; [done | by apply elem_of_nil in Hin].
Qed.
