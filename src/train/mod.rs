//! Training: count pre-token chunks, then merge the most frequent pair
//! repeatedly (ties: the pair met first, chunks in first-seen order, pairs left
//! to right inside a chunk; see SEEDS-SPEC "The tie-break rule").
