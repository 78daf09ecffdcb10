//! A key → sorted set map that forgets empty sets, so indexes never grow
//! with keys that no object references any more.

use std::collections::BTreeSet;
use std::hash::Hash;

use super::FastMap;

#[derive(Debug)]
pub struct MultiMap<K, V> {
    map: FastMap<K, BTreeSet<V>>,
}

impl<K, V> Default for MultiMap<K, V> {
    fn default() -> Self {
        Self {
            map: FastMap::default(),
        }
    }
}

impl<K: Eq + Hash, V: Ord> MultiMap<K, V> {
    pub fn insert(&mut self, key: K, value: V) {
        self.map.entry(key).or_default().insert(value);
    }

    pub fn remove<Q>(&mut self, key: &Q, value: &V)
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        if let Some(set) = self.map.get_mut(key) {
            set.remove(value);
            if set.is_empty() {
                self.map.remove(key);
            }
        }
    }

    pub fn get<Q>(&self, key: &Q) -> impl Iterator<Item = &V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.map.get(key).into_iter().flatten()
    }

    /// Number of distinct keys (for tests and memory accounting).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn keys(&self) -> usize {
        self.map.len()
    }
}
