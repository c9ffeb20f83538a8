//! Cylindrical projections (CYP CEA CAR MER), prj.c.

super::not_yet_written! {
    Cyp = "CYP",
    Cea = "CEA",
    Car = "CAR",
    Mer = "MER",
}
