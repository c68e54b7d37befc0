//! A kernel's per-core runtime args by rule: each arg is a list of runs over the kernel's cores
//! in row-major or column-major order ([`CoreOrder`]), each run a constant, a count
//! (`first + step·k` on its `k`-th core: block ranges), a buffer's address, or the NoC
//! coordinates of a fixed core or of the core a fixed number of places away (a neighbour in the
//! split). An arg every core agrees on is one run. [`describe`] finds the rules of the per-core
//! table the lowering made and checks that they give it back; [`expand`] gives the table again
//! when the program is loaded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Core, CoreRange};
use crate::kir::{Arg, CoreArgs};

/// The order the runs of a kernel's runtime args count its cores in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoreOrder {
    /// By rows (y), then columns (x): the order of the grid's first cores.
    #[default]
    RowMajor,
    /// By columns (x), then rows (y).
    ColumnMajor,
}

/// One runtime arg of a kernel, on each of its cores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeArg {
    pub name: String,
    /// Consecutive runs that cover the kernel's cores in its [`CoreOrder`].
    pub runs: Vec<Run>,
}

/// `cores` consecutive cores whose values `value` gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub cores: u32,
    #[serde(flatten)]
    pub value: RunValue,
}

/// What an arg is on the cores of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunValue {
    /// The same constant on every core.
    Const(u32),
    /// `first + step·k` on the run's `k`-th core (`k` from 0).
    Counting { first: u32, step: u32 },
    /// The device address of a buffer.
    Buffer(String),
    /// The NoC x coordinate of the worker at a logical core.
    NocX(Core),
    /// The NoC y coordinate of the worker at a logical core.
    NocY(Core),
    /// The NoC x coordinate of the core this many places later in the kernel's order (earlier
    /// when negative).
    NocXOf(i32),
    /// The NoC y coordinate of the core this many places later in the kernel's order.
    NocYOf(i32),
}

/// Per-core args that do not fit a kernel's cores, or rules that do not cover them.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RuleError {
    #[error("runtime args are given for cores {given:?} but the kernel's ranges hold {cores:?}; give every core of the ranges one list")]
    Cores { given: Vec<Core>, cores: Vec<Core> },
    #[error("core ({x},{y}) has {count} runtime args but the kernel names {names}", x = core.x, y = core.y)]
    Count {
        core: Core,
        count: usize,
        names: usize,
    },
    #[error("runtime arg `{arg}`: its runs cover {covered} cores but the kernel has {cores}")]
    Coverage {
        arg: String,
        covered: u64,
        cores: usize,
    },
    #[error("runtime arg `{arg}`: core {index} takes the NoC coordinates of the core {offset} places away, outside the kernel's {cores} cores")]
    Offset {
        arg: String,
        index: usize,
        offset: i32,
        cores: usize,
    },
    #[error("runtime arg `{arg}`: {first} + {step}·{k} does not fit 32 bits")]
    Overflow {
        arg: String,
        first: u32,
        step: u32,
        k: u32,
    },
    #[error("runtime arg `{arg}`: the rules found for it give core ({x},{y}) {got:?}, not {want:?}", x = core.x, y = core.y)]
    Mismatch {
        arg: String,
        core: Core,
        got: Arg,
        want: Arg,
    },
}

/// The cores of `ranges` in `order`.
pub fn ordered_cores(ranges: &[CoreRange], order: CoreOrder) -> Vec<Core> {
    let mut cores: Vec<Core> = ranges
        .iter()
        .flat_map(|r| {
            (r.start.y..=r.end.y)
                .flat_map(move |y| (r.start.x..=r.end.x).map(move |x| Core { x, y }))
        })
        .collect();
    match order {
        CoreOrder::RowMajor => cores.sort_by_key(|c| (c.y, c.x)),
        CoreOrder::ColumnMajor => cores.sort_by_key(|c| (c.x, c.y)),
    }
    cores
}

/// The value `value` gives the `k`-th core of its run, core `at` of `cores`, or why not.
fn value_at(
    value: &RunValue,
    k: u32,
    at: usize,
    cores: &[Core],
    arg: &str,
) -> Result<Arg, RuleError> {
    let neighbour = |offset: i32| {
        at.checked_add_signed(offset as isize)
            .and_then(|i| cores.get(i))
            .copied()
            .ok_or(RuleError::Offset {
                arg: arg.to_string(),
                index: at,
                offset,
                cores: cores.len(),
            })
    };
    Ok(match value {
        RunValue::Const(v) => Arg::Const(*v),
        RunValue::Counting { first, step } => Arg::Const(
            step.checked_mul(k)
                .and_then(|d| first.checked_add(d))
                .ok_or(RuleError::Overflow {
                    arg: arg.to_string(),
                    first: *first,
                    step: *step,
                    k,
                })?,
        ),
        RunValue::Buffer(name) => Arg::BufferAddress(name.clone()),
        RunValue::NocX(core) => Arg::NocX(*core),
        RunValue::NocY(core) => Arg::NocY(*core),
        RunValue::NocXOf(offset) => Arg::NocX(neighbour(*offset)?),
        RunValue::NocYOf(offset) => Arg::NocY(neighbour(*offset)?),
    })
}

/// The values of one arg on `cores` (in order) by its runs.
fn expand_arg(arg: &RuntimeArg, cores: &[Core]) -> Result<Vec<Arg>, RuleError> {
    let covered: u64 = arg.runs.iter().map(|r| u64::from(r.cores)).sum();
    if covered != cores.len() as u64 {
        return Err(RuleError::Coverage {
            arg: arg.name.clone(),
            covered,
            cores: cores.len(),
        });
    }
    let mut values = Vec::with_capacity(cores.len());
    for run in &arg.runs {
        for k in 0..run.cores {
            values.push(value_at(&run.value, k, values.len(), cores, &arg.name)?);
        }
    }
    Ok(values)
}

/// Every core of `ranges` (in `order`) with its runtime args, which `args` give by rule.
pub fn expand(
    ranges: &[CoreRange],
    order: CoreOrder,
    args: &[RuntimeArg],
) -> Result<Vec<CoreArgs>, RuleError> {
    let cores = ordered_cores(ranges, order);
    let mut table: Vec<CoreArgs> = cores
        .iter()
        .map(|core| CoreArgs {
            core: *core,
            args: Vec::with_capacity(args.len()),
        })
        .collect();
    for arg in args {
        for (core, value) in table.iter_mut().zip(expand_arg(arg, &cores)?) {
            core.args.push(value);
        }
    }
    Ok(table)
}

/// The rules that could start a run at core `at` whose value is `values[at]`.
fn candidates(values: &[&Arg], index: &BTreeMap<Core, usize>, at: usize) -> Vec<RunValue> {
    let place = |core: &Core| index.get(core).map(|&i| i as i32 - at as i32);
    match values[at] {
        Arg::Const(v) => {
            let mut out = vec![RunValue::Const(*v)];
            if let Some(Arg::Const(next)) = values.get(at + 1) {
                if next > v {
                    out.push(RunValue::Counting {
                        first: *v,
                        step: next - v,
                    });
                }
            }
            out
        }
        Arg::BufferAddress(name) => vec![RunValue::Buffer(name.clone())],
        Arg::NocX(core) => [
            Some(RunValue::NocX(*core)),
            place(core).map(RunValue::NocXOf),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Arg::NocY(core) => [
            Some(RunValue::NocY(*core)),
            place(core).map(RunValue::NocYOf),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

/// The runs a greedy cover finds for `values` on `cores`: from each core on, the rule that gives
/// the most consecutive values (the first of equals, the plainest; a count only over three
/// cores or more).
fn runs_of(values: &[&Arg], cores: &[Core]) -> Vec<Run> {
    let index: BTreeMap<Core, usize> = cores.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let mut runs = Vec::new();
    let mut at = 0;
    while at < values.len() {
        let mut best: Option<(u32, RunValue)> = None;
        for value in candidates(values, &index, at) {
            let length = (at..values.len())
                .take_while(|&j| {
                    value_at(&value, (j - at) as u32, j, cores, "")
                        .ok()
                        .as_ref()
                        == Some(values[j])
                })
                .count() as u32;
            // Two values are two constants to a reader; a count starts at three.
            let counts = matches!(value, RunValue::Counting { .. });
            if (!counts || length >= 3) && best.as_ref().is_none_or(|(l, _)| length > *l) {
                best = Some((length, value));
            }
        }
        match best {
            Some((cores, value)) if cores > 0 => {
                at += cores as usize;
                runs.push(Run { cores, value });
            }
            _ => break,
        }
    }
    runs
}

/// The rules of a kernel's per-core args `table` (one list per core of `ranges`, `names` the
/// args): in whichever core order needs fewer runs (row-major of equals), checked by expanding
/// them again.
pub fn describe(
    ranges: &[CoreRange],
    names: &[String],
    table: &[CoreArgs],
) -> Result<(CoreOrder, Vec<RuntimeArg>), RuleError> {
    let by_core: BTreeMap<Core, &CoreArgs> = table.iter().map(|c| (c.core, c)).collect();
    let mut given: Vec<Core> = table.iter().map(|c| c.core).collect();
    given.sort_by_key(|c| (c.y, c.x));
    let cores = ordered_cores(ranges, CoreOrder::RowMajor);
    if given != cores || by_core.len() != table.len() {
        return Err(RuleError::Cores { given, cores });
    }
    if let Some(c) = table.iter().find(|c| c.args.len() != names.len()) {
        return Err(RuleError::Count {
            core: c.core,
            count: c.args.len(),
            names: names.len(),
        });
    }
    let mut best: Option<(usize, CoreOrder, Vec<RuntimeArg>)> = None;
    for order in [CoreOrder::RowMajor, CoreOrder::ColumnMajor] {
        let cores = ordered_cores(ranges, order);
        let rows: Vec<&CoreArgs> = cores
            .iter()
            .filter_map(|c| by_core.get(c).copied())
            .collect();
        let args: Vec<RuntimeArg> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let values: Vec<&Arg> = rows.iter().filter_map(|r| r.args.get(i)).collect();
                RuntimeArg {
                    name: name.clone(),
                    runs: runs_of(&values, &cores),
                }
            })
            .collect();
        let count = args.iter().map(|a| a.runs.len()).sum();
        if best.as_ref().is_none_or(|(c, _, _)| count < *c) {
            best = Some((count, order, args));
        }
    }
    let (_, order, args) = best.unwrap_or_default();
    for core in expand(ranges, order, &args)? {
        let want = by_core.get(&core.core).map_or(&[][..], |c| &c.args[..]);
        let wrong = core
            .args
            .iter()
            .zip(want)
            .zip(&args)
            .find(|((got, want), _)| got != want);
        if let Some(((got, want), arg)) = wrong {
            return Err(RuleError::Mismatch {
                arg: arg.name.clone(),
                core: core.core,
                got: got.clone(),
                want: want.clone(),
            });
        }
    }
    Ok((order, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(x: u32, y: u32) -> Core {
        Core { x, y }
    }

    /// A 3×2 rectangle of cores.
    fn rect() -> Vec<CoreRange> {
        vec![CoreRange {
            start: core(0, 0),
            end: core(2, 1),
        }]
    }

    fn table(args: impl Fn(usize, Core) -> Vec<Arg>) -> Vec<CoreArgs> {
        ordered_cores(&rect(), CoreOrder::RowMajor)
            .into_iter()
            .enumerate()
            .map(|(i, c)| CoreArgs {
                core: c,
                args: args(i, c),
            })
            .collect()
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("a{i}")).collect()
    }

    /// Block starts 0, 2, 4, 6 (a count), then 7, 8 (two constants: a count needs three); a
    /// buffer every core agrees on; the sender's own coordinates on core 0 only; the core before
    /// each (itself on the first, so the first two name core 0).
    #[test]
    fn rules_by_hand_give_the_table_back() {
        let starts = [0, 2, 4, 6, 7, 8];
        let t = table(|i, c| {
            let before = if i == 0 {
                c
            } else {
                core((i as u32 - 1) % 3, (i as u32 - 1) / 3)
            };
            vec![
                Arg::Const(starts[i]),
                Arg::BufferAddress("in".into()),
                if i == 0 { Arg::NocX(c) } else { Arg::Const(0) },
                Arg::NocY(before),
            ]
        });
        let (order, args) = describe(&rect(), &names(4), &t).expect("describes");
        assert_eq!(order, CoreOrder::RowMajor);
        let runs: Vec<Vec<Run>> = args.iter().map(|a| a.runs.clone()).collect();
        let run = |cores, value| Run { cores, value };
        assert_eq!(
            runs,
            vec![
                vec![
                    run(4, RunValue::Counting { first: 0, step: 2 }),
                    run(1, RunValue::Const(7)),
                    run(1, RunValue::Const(8)),
                ],
                vec![run(6, RunValue::Buffer("in".into()))],
                vec![
                    run(1, RunValue::NocX(core(0, 0))),
                    run(5, RunValue::Const(0))
                ],
                vec![
                    run(2, RunValue::NocY(core(0, 0))),
                    run(4, RunValue::NocYOf(-1))
                ],
            ]
        );
        assert_eq!(expand(&rect(), order, &args), Ok(t));
    }

    /// Values counting down the columns take one run in column-major order.
    #[test]
    fn the_order_with_fewer_runs_wins() {
        let t = table(|_, c| vec![Arg::Const(10 * (c.x * 2 + c.y))]);
        let (order, args) = describe(&rect(), &names(1), &t).expect("describes");
        assert_eq!(order, CoreOrder::ColumnMajor);
        assert_eq!(
            args[0].runs,
            vec![Run {
                cores: 6,
                value: RunValue::Counting { first: 0, step: 10 }
            }]
        );
        assert_eq!(expand(&rect(), order, &args).map(|e| e.len()), Ok(6));
    }

    #[test]
    fn tables_that_do_not_fit_the_cores_are_refused() {
        let mut t = table(|_, _| vec![Arg::Const(1)]);
        t.pop();
        assert!(matches!(
            describe(&rect(), &names(1), &t),
            Err(RuleError::Cores { .. })
        ));
        let t = table(|i, _| vec![Arg::Const(1); 1 + usize::from(i == 3)]);
        assert_eq!(
            describe(&rect(), &names(1), &t),
            Err(RuleError::Count {
                core: core(0, 1),
                count: 2,
                names: 1
            })
        );
    }

    #[test]
    fn rules_that_do_not_cover_the_cores_are_refused() {
        let arg = |runs: Vec<Run>| RuntimeArg {
            name: "a".into(),
            runs,
        };
        let short = arg(vec![Run {
            cores: 5,
            value: RunValue::Const(0),
        }]);
        assert_eq!(
            expand(&rect(), CoreOrder::RowMajor, &[short]),
            Err(RuleError::Coverage {
                arg: "a".into(),
                covered: 5,
                cores: 6
            })
        );
        let beyond = arg(vec![Run {
            cores: 6,
            value: RunValue::NocXOf(1),
        }]);
        assert_eq!(
            expand(&rect(), CoreOrder::RowMajor, &[beyond]),
            Err(RuleError::Offset {
                arg: "a".into(),
                index: 5,
                offset: 1,
                cores: 6
            })
        );
        let overflow = arg(vec![Run {
            cores: 6,
            value: RunValue::Counting {
                first: u32::MAX - 1,
                step: 1,
            },
        }]);
        assert_eq!(
            expand(&rect(), CoreOrder::RowMajor, &[overflow]),
            Err(RuleError::Overflow {
                arg: "a".into(),
                first: u32::MAX - 1,
                step: 1,
                k: 2
            })
        );
    }
}
