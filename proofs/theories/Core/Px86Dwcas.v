(** * Px86 litmus tests of the 16-byte CAS ([cmpxchg16b])

    The litmus format of PX86.md (and so [modelcheck/litmus/] and the engine
    [impl/perdure-check/src/litmus]) has no 16-byte CAS; the code uses one
    ([perdure_pm::dword::compare_exchange_16], [lock cmpxchg16b] on two
    8-byte words of a 16-byte-aligned pair, so of one cache line).  These
    tests pin down what [Px86.v]'s [IDwcas] means, in the same form as the
    generated [Px86Litmus.v], each proved by [decide_litmus]:
    - it is a locked RMW: it waits for its thread's buffer to drain and for
      its pending write-backs and ntstores to take effect ([dwcas_sb],
      [dwcas_completes_clflushopt]);
    - its compare and its two writes are one step: no thread sees half of
      it ([dwcas_visible_atomically]); of two racing ones exactly one
      succeeds ([dwcas_race]); a failing one writes nothing ([dwcas_fail]);
    - its writes are not persisted by it ([dwcas_not_persisted]);
    - persistence of the pair: with [atomic = true] a crash keeps both
      halves or neither ([dwcas_persists_atomically]); with
      [atomic = false] either half may persist alone
      ([dwcas_split_halves]) — the two readings of PX86.md ("whether a
      16-byte aligned store persists atomically is an assumption an
      algorithm must state"), as [SimOptions::dword_persists_atomically]
      offers them in [impl/perdure-pm/src/sim.rs] (there one write whose
      halves a crash may split; here two writes, in either order, which
      give the same crash images);
    - a later store to the line persists only after both halves
      ([dwcas_then_store_sameline]).

    Not covered: a 16-byte CAS whose two locations are on different lines,
    or are one location, does not execute in [Px86.v] (the thread stops
    there; the hardware faults on a misaligned operand); mixing 8-byte and
    16-byte accesses is covered only through loads (a load of one half
    reads the visible value, as any load does).

    Locations: x = 0 and y = 1 (the pair, line 0), z = 2 (line 1). *)
From stdpp Require Import base list.
From perdure.Core Require Import Px86.

Definition pair_line : loc → nat := λ l, nth l [0; 0; 1] 0.

(** [dwcas x y 0 0 1 1] ‖ [load r1 y; load r2 x]: TSO keeps the loads in
    order, so r1=1 r2=0 would mean y's new value was visible before x's. *)
Definition dwcas_visible_atomically : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [
    [IDwcas false None 0 1 0 0 1 1];
    [ILoad 0 1; ILoad 1 0]];
  lt_exps := [
    Forbid (Outcome [] [(1, 0, 1); (1, 1, 0)]);
    Allow (Outcome [] [(1, 0, 0); (1, 1, 1)]);
    Allow (Outcome [] [(1, 0, 1); (1, 1, 1)]);
    Allow (Outcome [] [(1, 0, 0); (1, 1, 0)])] |}.

Theorem litmus_dwcas_visible_atomically : litmus_holds dwcas_visible_atomically.
Proof. decide_litmus. Qed.

(** Two [dwcas r x y 0 0 _ _] race: one succeeds. *)
Definition dwcas_race : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [
    [IDwcas true (Some 0) 0 1 0 0 1 1];
    [IDwcas true (Some 0) 0 1 0 0 2 2]];
  lt_exps := [
    Forbid (Outcome [] [(0, 0, 1); (1, 0, 1)]);
    Forbid (Outcome [] [(0, 0, 0); (1, 0, 0)]);
    Allow (Outcome [(0, 1); (1, 1)] [(0, 0, 1); (1, 0, 0)]);
    Allow (Outcome [(0, 2); (1, 2)] [(0, 0, 0); (1, 0, 1)]);
    (* the loser compared against the winner's pair: no mix persists *)
    Forbid (Outcome [(0, 1); (1, 2)] []);
    Forbid (Outcome [(0, 2); (1, 1)] [])] |}.

Theorem litmus_dwcas_race : litmus_holds dwcas_race.
Proof. decide_litmus. Qed.

(** [init y=7]; [dwcas r x y 0 0 1 1] fails on y: r=0, nothing written. *)
Definition dwcas_fail : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [(1, 7)];
  lt_progs := [[IDwcas true (Some 0) 0 1 0 0 1 1]];
  lt_exps := [
    Allow (Outcome [(0, 0); (1, 7)] [(0, 0, 0)]);
    Forbid (Outcome [] [(0, 0, 1)]);
    Forbid (Outcome [(0, 1)] []);
    Forbid (Outcome [(1, 1)] [])] |}.

Theorem litmus_dwcas_fail : litmus_holds dwcas_fail.
Proof. decide_litmus. Qed.

(** SB with a 16-byte CAS between each store and load: both drain. *)
Definition dwcas_sb : litmus := {|
  lt_line := λ l, nth l [0; 0; 1; 2] 0;
  lt_nlines := 3;
  lt_init := [];
  lt_progs := [
    [IStore 2 1; IDwcas true None 0 1 0 0 1 1; ILoad 0 3];
    [IStore 3 1; IDwcas true None 0 1 5 5 6 6; ILoad 0 2]];
  lt_exps := [
    Forbid (Outcome [] [(0, 0, 0); (1, 0, 0)]);
    Allow (Outcome [] [(0, 0, 0); (1, 0, 1)]);
    Allow (Outcome [] [(0, 0, 1); (1, 0, 0)])] |}.

Theorem litmus_dwcas_sb : litmus_holds dwcas_sb.
Proof. decide_litmus. Qed.

(** [store z 1; clflushopt z; dwcas r x y 0 0 1 1]: once the 16-byte CAS
    executed (r=1), the write-back of z took effect. *)
Definition dwcas_completes_clflushopt : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [[IStore 2 1; IClflushopt 2; IDwcas true (Some 0) 0 1 0 0 1 1]];
  lt_exps := [
    Forbid (Outcome [(2, 0)] [(0, 0, 1)]);
    Allow (Outcome [(2, 1)] [(0, 0, 1)]);
    Allow (Outcome [(2, 0)] [])] |}.

Theorem litmus_dwcas_completes_clflushopt : litmus_holds dwcas_completes_clflushopt.
Proof. decide_litmus. Qed.

(** The CAS's write is visible, not persisted: after it a crash may keep
    the old pair; once an [mfence] after [clwb x] completed (r2 written) it
    may not. *)
Definition dwcas_not_persisted : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [[IDwcas true (Some 0) 0 1 0 0 1 1; ILoad 1 1; IClwb 0; IMfence; ILoad 2 0]];
  lt_exps := [
    Allow (Outcome [(0, 0); (1, 0)] [(0, 0, 1); (0, 1, 1)]);
    Forbid (Outcome [(0, 0)] [(0, 2, 1)]);
    Forbid (Outcome [(1, 0)] [(0, 2, 1)]);
    Allow (Outcome [(0, 1); (1, 1)] [(0, 2, 1)])] |}.

Theorem litmus_dwcas_not_persisted : litmus_holds dwcas_not_persisted.
Proof. decide_litmus. Qed.

(** Atomic persistence of the pair: a crash keeps both halves or neither. *)
Definition dwcas_persists_atomically : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [[IDwcas true None 0 1 0 0 1 1]];
  lt_exps := [
    Forbid (Outcome [(0, 1); (1, 0)] []);
    Forbid (Outcome [(0, 0); (1, 1)] []);
    Allow (Outcome [(0, 1); (1, 1)] []);
    Allow (Outcome [(0, 0); (1, 0)] [])] |}.

Theorem litmus_dwcas_persists_atomically : litmus_holds dwcas_persists_atomically.
Proof. decide_litmus. Qed.

(** Split persistence: either half alone. *)
Definition dwcas_split_halves : litmus := {|
  lt_line := pair_line;
  lt_nlines := 2;
  lt_init := [];
  lt_progs := [[IDwcas false None 0 1 0 0 1 1]];
  lt_exps := [
    Allow (Outcome [(0, 1); (1, 0)] []);
    Allow (Outcome [(0, 0); (1, 1)] []);
    Allow (Outcome [(0, 1); (1, 1)] []);
    Allow (Outcome [(0, 0); (1, 0)] [])] |}.

Theorem litmus_dwcas_split_halves : litmus_holds dwcas_split_halves.
Proof. decide_litmus. Qed.

(** [dwcas x y 0 0 1 1; store w 1] with w on the pair's line (w = 2 here):
    the line persists a prefix, so w=1 needs both halves, split or not. *)
Definition dwcas_then_store_sameline (atomic : bool) : litmus := {|
  lt_line := λ _, 0;
  lt_nlines := 1;
  lt_init := [];
  lt_progs := [[IDwcas atomic None 0 1 0 0 1 1; IStore 2 1]];
  lt_exps := [
    Forbid (Outcome [(0, 0); (2, 1)] []);
    Forbid (Outcome [(1, 0); (2, 1)] []);
    Allow (Outcome [(0, 1); (1, 1); (2, 0)] [])] |}.

Theorem litmus_dwcas_then_store_sameline atomic : litmus_holds (dwcas_then_store_sameline atomic).
Proof. destruct atomic; decide_litmus. Qed.
