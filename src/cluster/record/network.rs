//! EndpointSlices: which pod UIDs and IPs still receive traffic.

use super::Meta;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointSlice {
    pub meta: Meta,
    pub endpoints: Vec<Endpoint>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub addresses: Vec<String>,
    pub target: Option<TargetRef>,
}

/// An endpoint's `targetRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetRef {
    pub kind: Option<String>,
    pub name: Option<String>,
    pub uid: Option<String>,
}

impl From<k8s_openapi::api::discovery::v1::EndpointSlice> for EndpointSlice {
    fn from(slice: k8s_openapi::api::discovery::v1::EndpointSlice) -> Self {
        let endpoints = slice
            .endpoints
            .into_iter()
            .flatten()
            .map(|e| Endpoint {
                addresses: e.addresses,
                target: e.target_ref.map(|r| TargetRef {
                    kind: r.kind,
                    name: r.name,
                    uid: r.uid,
                }),
            })
            .collect();
        EndpointSlice {
            meta: slice.metadata.into(),
            endpoints,
        }
    }
}
