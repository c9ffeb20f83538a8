//! Conic projections (COP COE COD COO), prj.c.

super::not_yet_written! {
    Cop = "COP",
    Coe = "COE",
    Cod = "COD",
    Coo = "COO",
}
