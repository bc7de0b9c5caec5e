//! Plans: the [`PlanCreator`] contract and the [`DependencyPlanCreator`], which orders tasks into
//! phases by their dependencies.

use std::collections::HashMap;

use crate::Task;

/// Tasks in phases: every task of a phase depends only on tasks of earlier phases, so a phase's
/// tasks may run at the same time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    phases: Vec<Vec<Task>>,
}

impl Plan {
    /// A plan of these phases, in order.
    pub fn new(phases: Vec<Vec<Task>>) -> Self {
        Self { phases }
    }

    /// The phases, in the order they run.
    pub fn phases(&self) -> &[Vec<Task>] {
        &self.phases
    }

    /// The phases, owned.
    pub fn into_phases(self) -> Vec<Vec<Task>> {
        self.phases
    }

    /// How many tasks the plan holds.
    pub fn task_count(&self) -> usize {
        self.phases.iter().map(Vec::len).sum()
    }

    /// The ids of each phase's tasks, in order.
    pub fn phase_ids(&self) -> Vec<Vec<&str>> {
        self.phases
            .iter()
            .map(|phase| phase.iter().map(|task| task.id.as_str()).collect())
            .collect()
    }
}

/// Why tasks could not be put in order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Two tasks share an id.
    #[error("two tasks have the id '{id}'; give each task its own id")]
    DuplicateTask {
        /// The id used twice.
        id: String,
    },
    /// A task depends on a task the plan does not hold.
    #[error("task '{task}' depends on '{dependency}', which is not a task of the plan")]
    UnknownDependency {
        /// The task that names the dependency.
        task: String,
        /// The id that names no task.
        dependency: String,
    },
    /// Tasks depend on each other in a cycle, so none of them can start.
    #[error(
        "tasks depend on each other in a cycle, so none of them can start: {}; remove one of these dependencies",
        cycle_text(.tasks)
    )]
    Cycle {
        /// The tasks of the cycle, each depending on the next and the last on the first.
        tasks: Vec<String>,
    },
}

fn cycle_text(tasks: &[String]) -> String {
    let mut text = tasks.join(" -> ");
    if let Some(first) = tasks.first() {
        text.push_str(" -> ");
        text.push_str(first);
    }
    text
}

/// Orders tasks into a [`Plan`].
pub trait PlanCreator: Send + Sync {
    /// The phases `tasks` run in.
    fn create_plan(&self, tasks: Vec<Task>) -> Result<Plan, PlanError>;
}

/// Plans by dependencies: builds the dependency graph, rejects unknown dependencies and cycles
/// (naming the tasks in the cycle), puts each task in the phase after the latest of its
/// dependencies (topological levels), sorts each phase by priority (ties keep the analyzer's
/// order), and splits a phase larger than `max_tasks_per_phase` into consecutive phases.
///
/// It runs in time linear in the tasks and dependencies.
///
/// ```
/// use adk_orchestrator::{DependencyPlanCreator, PlanCreator as _, Task};
///
/// let plan = DependencyPlanCreator::new(10)
///     .create_plan(vec![
///         Task::new("write", "write", "writer").with_dependencies(["a", "b"]),
///         Task::new("a", "fetch", "web").with_priority(2),
///         Task::new("b", "fetch", "web").with_priority(1),
///     ])
///     .unwrap();
/// assert_eq!(plan.phase_ids(), [vec!["b", "a"], vec!["write"]]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DependencyPlanCreator {
    /// The most tasks one phase holds.
    pub max_tasks_per_phase: usize,
}

impl Default for DependencyPlanCreator {
    fn default() -> Self {
        Self {
            max_tasks_per_phase: Self::DEFAULT_MAX_TASKS_PER_PHASE,
        }
    }
}

impl DependencyPlanCreator {
    /// The limit when none is given, as in dspy-go.
    pub const DEFAULT_MAX_TASKS_PER_PHASE: usize = 10;

    /// A planner with at most `max_tasks_per_phase` tasks per phase; 0 means the default of 10.
    pub fn new(max_tasks_per_phase: usize) -> Self {
        Self {
            max_tasks_per_phase: if max_tasks_per_phase == 0 {
                Self::DEFAULT_MAX_TASKS_PER_PHASE
            } else {
                max_tasks_per_phase
            },
        }
    }
}

impl PlanCreator for DependencyPlanCreator {
    fn create_plan(&self, tasks: Vec<Task>) -> Result<Plan, PlanError> {
        let graph = Graph::build(&tasks)?;
        let levels = graph.levels().map_err(|cycle| PlanError::Cycle {
            tasks: cycle.into_iter().map(|i| tasks[i].id.clone()).collect(),
        })?;
        let depth = levels.iter().copied().max().map_or(0, |max| max + 1);
        let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); depth];
        for (index, level) in levels.iter().enumerate() {
            by_level[*level].push(index);
        }
        let mut tasks: Vec<Option<Task>> = tasks.into_iter().map(Some).collect();
        let mut phases = Vec::with_capacity(depth);
        let max = self.max_tasks_per_phase.max(1);
        for mut level in by_level {
            // A stable sort keeps the analyzer's order among tasks of equal priority.
            level.sort_by_key(|&index| tasks[index].as_ref().map_or(0, |task| task.priority));
            for chunk in level.chunks(max) {
                phases.push(
                    chunk
                        .iter()
                        .filter_map(|&index| tasks[index].take())
                        .collect(),
                );
            }
        }
        Ok(Plan::new(phases))
    }
}

/// The dependency graph of a list of tasks, by index.
struct Graph {
    /// For each task, the indices of the tasks it depends on.
    dependencies: Vec<Vec<usize>>,
    /// For each task, the indices of the tasks that depend on it.
    dependents: Vec<Vec<usize>>,
}

impl Graph {
    fn build(tasks: &[Task]) -> Result<Self, PlanError> {
        let mut index = HashMap::with_capacity(tasks.len());
        for (i, task) in tasks.iter().enumerate() {
            if index.insert(task.id.as_str(), i).is_some() {
                return Err(PlanError::DuplicateTask {
                    id: task.id.clone(),
                });
            }
        }
        let mut dependencies = Vec::with_capacity(tasks.len());
        let mut dependents = vec![Vec::new(); tasks.len()];
        for (i, task) in tasks.iter().enumerate() {
            let mut of_task = Vec::with_capacity(task.dependencies.len());
            for dependency in &task.dependencies {
                let Some(&d) = index.get(dependency.as_str()) else {
                    return Err(PlanError::UnknownDependency {
                        task: task.id.clone(),
                        dependency: dependency.clone(),
                    });
                };
                if !of_task.contains(&d) {
                    of_task.push(d);
                    dependents[d].push(i);
                }
            }
            dependencies.push(of_task);
        }
        Ok(Self {
            dependencies,
            dependents,
        })
    }

    /// Each task's level: 0 without dependencies, else one more than its deepest dependency
    /// (Kahn's algorithm). A cycle, when there is one, is returned as task indices instead.
    fn levels(&self) -> Result<Vec<usize>, Vec<usize>> {
        let count = self.dependencies.len();
        let mut waiting: Vec<usize> = self.dependencies.iter().map(Vec::len).collect();
        let mut levels = vec![0; count];
        let mut ready: Vec<usize> = (0..count).filter(|&i| waiting[i] == 0).collect();
        let mut placed = 0;
        while let Some(task) = ready.pop() {
            placed += 1;
            for &dependent in &self.dependents[task] {
                levels[dependent] = levels[dependent].max(levels[task] + 1);
                waiting[dependent] -= 1;
                if waiting[dependent] == 0 {
                    ready.push(dependent);
                }
            }
        }
        if placed == count {
            return Ok(levels);
        }
        Err(self.find_cycle(&waiting))
    }

    /// A cycle among the tasks left waiting: each of them waits on another waiting task, so
    /// following those dependencies from any of them must come back to a task already seen.
    fn find_cycle(&self, waiting: &[usize]) -> Vec<usize> {
        let Some(start) = (0..waiting.len()).find(|&i| waiting[i] > 0) else {
            return Vec::new();
        };
        let mut path = vec![start];
        let mut position = HashMap::from([(start, 0)]);
        let mut current = start;
        loop {
            let Some(&next) = self.dependencies[current].iter().find(|&&d| waiting[d] > 0) else {
                return path;
            };
            if let Some(&at) = position.get(&next) {
                return path.split_off(at);
            }
            position.insert(next, path.len());
            path.push(next);
            current = next;
        }
    }
}
