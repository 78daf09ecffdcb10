//! ForceDeletionPolicy objects as `serve`'s policy source.
//!
//! - [`store`]: per object, the generation in force (the last one that
//!   compiled) and why a newer one does not.
//! - [`cluster`]: the watch on the objects feeding the store, the set in
//!   force swapped on every change.
//! - [`roster`]: each replica's report of what it has in force, one
//!   annotation per replica on one Lease.
//! - [`writer`]: the status writer, one replica at a time (its own Lease),
//!   writing only what changed; [`permissions`] checks what the policies'
//!   facts need with SelfSubjectAccessReviews.

pub mod cluster;
pub mod permissions;
pub mod roster;
pub mod store;
pub mod writer;
