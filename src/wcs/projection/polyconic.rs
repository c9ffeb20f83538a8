//! Polyconic and pseudoconic projections (BON PCO), prj.c.

super::not_yet_written! {
    Bon = "BON",
    Pco = "PCO",
}
