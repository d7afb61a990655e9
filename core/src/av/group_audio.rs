//! Group audio (groupav.c): Opus frames in the conferences' lossy packet 199, decoded per
//! peer.
