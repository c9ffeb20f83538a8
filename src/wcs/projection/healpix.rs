//! HEALPix projections (HPX XPH), prj.c.

super::not_yet_written! {
    Hpx = "HPX",
    Xph = "XPH",
}
