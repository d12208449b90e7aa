// The hooks of whitenFold.wgsl doing nothing: the producers' own pipelines, when no whitening
// follows them or the variant whitens in passes of its own.

fn foldRow(x: f32, m: f32) {}

fn foldRowAt(i: u32, x: f32) {}

fn foldFinish(lid: u32, block: u32, live: bool, tail: u32) {}
