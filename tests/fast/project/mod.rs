//! The project itself: the layer order of `src/`, the README's pictures, the programs CI installs.

mod assets;
mod ci_programs;
mod layers;
