//! Cluster objects for one scenario, created through the API as admin.
//!
//! Nothing acts on them (no kubelet, scheduler or controllers): pods are
//! bound with `spec.nodeName` and their status, like the nodes', Jobs',
//! claims' and VolumeAttachments', is patched the way the real component
//! would report it. Every scenario gets its own namespace, and its nodes and
//! cluster-scoped objects are prefixed with the scenario's name.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::kubectl::{Kubectl, Run, eventually};

/// Image of every fake pod (never pulled: no kubelet runs).
const IMAGE: &str = "registry.k8s.io/pause:3.10";
static POD_IPS: AtomicU32 = AtomicU32::new(1);

/// How a fake node looks to the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Ready=True, recent heartbeat.
    Ready,
    /// Ready=Unknown and tainted `node.kubernetes.io/unreachable`: cut off,
    /// but its containers may still run. Not fenced.
    Unreachable,
    /// Unreachable and tainted `node.kubernetes.io/out-of-service`: fenced.
    OutOfService,
}

/// What a fake pod carries besides its name and node.
#[derive(Clone, Debug, Default)]
pub struct PodSpec {
    pub owner: Option<Value>,
    pub claims: Vec<String>,
    pub labels: Vec<(String, String)>,
    pub finalizers: Vec<String>,
}

pub struct Scene {
    pub harness: &'static Harness,
    pub ns: String,
    prefix: String,
}

impl Scene {
    /// Namespace `e2e-<name>`, created now.
    pub fn new(harness: &'static Harness, name: &str) -> Scene {
        let scene = Scene {
            harness,
            ns: format!("e2e-{name}"),
            prefix: name.to_owned(),
        };
        scene.k().ok(&["create", "namespace", &scene.ns]);
        scene
    }

    /// The admin's kubectl.
    pub fn k(&self) -> &Kubectl {
        &self.harness.admin
    }

    /// `kubectl -n <ns> <args>` as admin.
    pub fn run(&self, args: &[&str]) -> Run {
        self.k().run(&self.namespaced(args))
    }

    pub fn ok(&self, args: &[&str]) -> String {
        self.k().ok(&self.namespaced(args))
    }

    fn namespaced<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["-n", self.ns.as_str()];
        all.extend_from_slice(args);
        all
    }

    /// A node named `<scene>-<suffix>` in `state`; returns its name.
    pub fn node(&self, suffix: &str, state: NodeState) -> String {
        let name = format!("{}-{suffix}", self.prefix);
        let mut taints = Vec::new();
        if state != NodeState::Ready {
            taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}));
            taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}));
        }
        if state == NodeState::OutOfService {
            taints.push(json!({
                "key": "node.kubernetes.io/out-of-service",
                "value": "nodeshutdown",
                "effect": "NoExecute",
            }));
        }
        self.k().create(&json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints},
        }));
        let now = now();
        let ready = match state {
            NodeState::Ready => json!({
                "type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now, "lastTransitionTime": now,
            }),
            _ => json!({
                "type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
                "lastHeartbeatTime": now, "lastTransitionTime": now,
            }),
        };
        // No kubelet runs here: the admin writes what it would, breaking
        // glass (only a node's kubelet and the node lifecycle controller
        // may set Ready: manifests/node-fencing.yaml).
        let body = json!({"status": {"conditions": [ready]}}).to_string();
        self.k().ok(&[
            "patch",
            "node",
            &name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &body,
            "--as=testcluster-admin",
            "--as-group=system:masters",
            "--as-group=forcegate:break-glass",
        ]);
        name
    }

    /// A StatefulSet object (no controller acts on it); returns an
    /// ownerReference to it.
    pub fn stateful_set(&self, name: &str) -> Value {
        let labels = json!({"app": name});
        let created = self.k().create(&json!({
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": self.ns},
            "spec": {
                "serviceName": name,
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "app", "image": IMAGE}]},
                },
            },
        }));
        owner_reference(&created)
    }

    /// A CronJob and one of its Jobs, reported active; returns an
    /// ownerReference to the Job and its name.
    pub fn active_cron_job(&self, name: &str) -> (Value, String) {
        let template = json!({
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "run", "image": IMAGE}],
            },
        });
        let cron = self.k().create(&json!({
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": name, "namespace": self.ns},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template}}},
        }));
        let job_name = format!("{name}-29000000");
        let job = self.k().create(&json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name,
                "namespace": self.ns,
                "ownerReferences": [owner_reference(&cron)],
            },
            "spec": {"backoffLimit": 0, "template": template},
        }));
        self.patch_status(
            "job",
            &job_name,
            true,
            &json!({"status": {"active": 1, "ready": 1, "startTime": now()}}),
        );
        (owner_reference(&job), job_name)
    }

    /// A pod bound to `node` and reported Running with its own IP; returns
    /// its UID.
    pub fn running_pod(&self, name: &str, node: &str, spec: PodSpec) -> String {
        let labels: serde_json::Map<String, Value> = spec
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut metadata = json!({"name": name, "namespace": self.ns, "labels": labels});
        if let Some(owner) = &spec.owner {
            metadata["ownerReferences"] = json!([owner]);
        }
        if !spec.finalizers.is_empty() {
            metadata["finalizers"] = json!(spec.finalizers);
        }
        let volumes: Vec<Value> = spec
            .claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        let mounts: Vec<Value> = spec
            .claims
            .iter()
            .map(|c| json!({"name": c, "mountPath": format!("/data/{c}")}))
            .collect();
        let created = self.k().create(&json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {
                "nodeName": node,
                "terminationGracePeriodSeconds": 30,
                "containers": [{"name": "app", "image": IMAGE, "volumeMounts": mounts}],
                "volumes": volumes,
            },
        }));
        let n = POD_IPS.fetch_add(1, Ordering::Relaxed);
        let ip = format!("10.244.{}.{}", n / 250, n % 250 + 2);
        let now = now();
        self.patch_status(
            "pod",
            name,
            true,
            &json!({"status": {
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "hostIP": "192.0.2.10",
                "startTime": now,
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
            }}),
        );
        uid(&created)
    }

    /// A Lease in the scene's namespace held by `holder`, renewed now.
    pub fn lease(&self, name: &str, holder: &str, seconds: i32) {
        let now = serde_json::to_value(MicroTime(Timestamp::now())).unwrap_or_default();
        self.k().create(&json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": self.ns},
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": seconds,
                "acquireTime": now,
                "renewTime": now,
            },
        }));
    }

    /// A human user allowed to read, patch and delete pods and claims and
    /// to evict pods in this namespace (and nothing else).
    pub fn human(&self, user: &str) {
        let role = format!("{user}-operator");
        self.ok(&[
            "create",
            "role",
            &role,
            "--verb=get,list,watch,patch,update,delete",
            "--resource=pods,persistentvolumeclaims",
        ]);
        self.k().ok_stdin(
            &["apply", "-f", "-"],
            &json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": format!("{user}-evict"), "namespace": self.ns},
                "rules": [{"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}],
            })
            .to_string(),
        );
        for granted in [role, format!("{user}-evict")] {
            self.ok(&[
                "create",
                "rolebinding",
                &granted,
                &format!("--role={granted}"),
                &format!("--user={user}"),
            ]);
        }
    }

    pub fn patch_status(&self, kind: &str, name: &str, namespaced: bool, patch: &Value) {
        let body = patch.to_string();
        let args = [
            "patch",
            kind,
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            body.as_str(),
        ];
        if namespaced {
            self.ok(&args);
        } else {
            self.k().ok(&args);
        }
    }

    /// The pod as stored, or `None` once it is gone.
    pub fn pod(&self, name: &str) -> Option<Value> {
        self.k().get(&["-n", &self.ns, "pod", name])
    }

    /// The ForceDeletion named from `uid`, if any.
    pub fn record(&self, uid: &str) -> Option<Value> {
        self.k().get(&["forcedeletion", &record_name(uid)])
    }

    /// Retry `args` (a `--dry-run=server` command) until forcegate's caches
    /// hold this scene's objects, i.e. until `settled` accepts the answer.
    /// The watch caches are eventually consistent with what the test just
    /// created; dry runs have no side effects (a test checks that).
    pub fn until_forcegate_sees(&self, args: &[&str], settled: impl Fn(&Run) -> bool) -> Run {
        let all = self.namespaced(args);
        assert!(
            all.contains(&"--dry-run=server") || all.iter().any(|a| a.contains("dryRun=All")),
            "until_forcegate_sees needs a dry run, got {all:?}"
        );
        eventually(
            &format!(
                "forcegate to answer `kubectl {}` as expected",
                all.join(" ")
            ),
            Duration::from_secs(20),
            || {
                let run = self.k().run(&all);
                if settled(&run) {
                    Ok(run)
                } else {
                    Err(run.describe())
                }
            },
        )
    }
}

/// `fd-<uid>`, as `forcegate::cleanup::record_name` names records.
pub fn record_name(uid: &str) -> String {
    forcegate::cleanup::record_name(uid)
}

pub fn uid(object: &Value) -> String {
    object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("object without a UID: {object}"))
        .to_owned()
}

fn owner_reference(object: &Value) -> Value {
    json!({
        "apiVersion": object["apiVersion"],
        "kind": object["kind"],
        "name": object.pointer("/metadata/name"),
        "uid": uid(object),
        "controller": true,
    })
}

/// Now as a metav1.Time string.
fn now() -> Value {
    serde_json::to_value(Time(Timestamp::now())).unwrap_or_default()
}

/// A denial by forcegate's webhook `webhook` naming `policy`.
pub fn denied_by(run: &Run, webhook: &str, policy: &str) -> bool {
    !run.success()
        && run.stderr.contains(&format!(
            "admission webhook \"{webhook}\" denied the request"
        ))
        && run.stderr.contains(&format!("- {policy}:"))
}
