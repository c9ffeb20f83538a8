//! Pseudo-cylindrical and conventional projections (SFL PAR MOL AIT), prj.c.

super::not_yet_written! {
    Sfl = "SFL",
    Par = "PAR",
    Mol = "MOL",
    Ait = "AIT",
}
