//! Storage fixtures: claims, volumes and their attachments.

use serde_json::json;

use crate::fixtures::{Scene, uid};

/// CSI driver name of the fake volumes.
const DRIVER: &str = "e2e.csi.forcegate.dev";

impl Scene {
    /// PVC `claim` bound to a PV attached (VolumeAttachment, attached=true)
    /// on `node`; returns the VolumeAttachment's name.
    pub fn attached_volume(&self, claim: &str, node: &str) -> String {
        let pv = format!("{}-{claim}", self.ns);
        self.k().create(&json!({
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "claimRef": {"namespace": self.ns, "name": claim},
                "csi": {"driver": DRIVER, "volumeHandle": pv},
            },
        }));
        self.claim_bound_to(claim, Some(&pv));
        self.patch_status("pv", &pv, false, &json!({"status": {"phase": "Bound"}}));
        let attachment = format!("{pv}-{node}");
        self.k().create(&json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": attachment},
            "spec": {
                "attacher": DRIVER,
                "nodeName": node,
                "source": {"persistentVolumeName": pv},
            },
        }));
        self.patch_status(
            "volumeattachment",
            &attachment,
            false,
            &json!({"status": {"attached": true}}),
        );
        attachment
    }

    /// A PVC (with the pvc-protection finalizer the API server adds);
    /// bound to `volume` when given. Returns its UID.
    pub fn claim_bound_to(&self, claim: &str, volume: Option<&str>) -> String {
        let mut spec = json!({
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "resources": {"requests": {"storage": "1Gi"}},
        });
        if let Some(volume) = volume {
            spec["volumeName"] = json!(volume);
        }
        let created = self.k().create(&json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": self.ns},
            "spec": spec,
        }));
        if volume.is_some() {
            self.patch_status(
                "pvc",
                claim,
                true,
                &json!({"status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "1Gi"},
                }}),
            );
        }
        uid(&created)
    }
}
