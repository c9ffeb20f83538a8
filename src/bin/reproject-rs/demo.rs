//! The `demo` command: a deterministic synthetic all-sky survey in Galactic coordinates (CAR),
//! reprojected to an equatorial TAN tile of the Galactic centre and to an all-sky equatorial
//! AIT map, with FITS outputs, PNG previews and timings. No data and no network needed.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use reproject::engine::Parallel;
use reproject::interp::Order;
use reproject::io::{MappedOutput, OutputType};

use crate::header::{card, card_f64, card_str, history};
use crate::job::{self, Job};
use crate::preview;
use crate::CliResult;

/// What the demo is asked to do.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    pub out_dir: PathBuf,
    /// Width of the all-sky input in pixels (height is half).
    pub width: usize,
    pub order: Order,
    pub parallel: Parallel,
    pub quiet: bool,
}

/// File names of the demo (the only files it replaces).
const INPUT: &str = "galactic_survey_car";
const TILE: &str = "galactic_centre_tan";
const ALLSKY: &str = "allsky_equatorial_ait";

/// Sgr A* (ICRS), the centre of the TAN tile.
const SGR_A: (f64, f64) = (266.416_833, -29.007_806);

/// Runs the demo.
pub fn run(o: &DemoOptions) -> CliResult<()> {
    let start = Instant::now();
    let say = |s: String| {
        if !o.quiet {
            println!("{s}");
        }
    };
    std::fs::create_dir_all(&o.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", o.out_dir.display()))?;
    let file = |name: &str, ext: &str| o.out_dir.join(format!("{name}.{ext}"));
    let w = o.width.max(64) / 2 * 2;
    let h = w / 2;
    let sky = SkyModel::new(w, h);
    say(format!(
        "reproject-rs demo: a synthetic sky, reprojected; files in {}/\n",
        o.out_dir.display()
    ));

    // 1. The input survey.
    say(format!(
        "[1/4] synthetic all-sky survey, Galactic CAR (GLON/GLAT): {w} x {h} px at {:.4} \
         deg/px\n      diffuse disk with clumpy structure, bulge, cirrus, Loop I, {} HII regions, \
         {} point sources, LMC, SMC, M31",
        sky.cdelt,
        sky.hii.len(),
        sky.points.len()
    ));
    let t = Instant::now();
    let input = file(INPUT, "fits");
    let mut out = MappedOutput::create_fits(&input, &[h, w], OutputType::F32, &sky.header(), true)
        .map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let data = out
        .data_mut::<f32>()
        .map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    o.parallel
        .install(|| sky.render(data))
        .map_err(|e| e.to_string())?;
    let t_gen = t.elapsed();
    let t = Instant::now();
    let png = file(INPUT, "png");
    let info = preview::write_png::<f32, f32>(&png, data, None, h, w, true)?;
    let t_png = t.elapsed();
    let t = Instant::now();
    out.finish()
        .map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let t_write = t.elapsed();
    say(format!(
        "      generated in {:.2} s; wrote {INPUT}.fits ({}) in {:.2} s\n      preview \
         {INPUT}.png: {} x {} px, asinh stretch from {:.3} to {:.3} MJy/sr, {:.2} s",
        t_gen.as_secs_f64(),
        size_of(&input),
        t_write.as_secs_f64(),
        info.width,
        info.height,
        info.low,
        info.high,
        t_png.as_secs_f64()
    ));

    // 2. and 3. The reprojections, through the same code as `reproject-rs IN --to T -o OUT`.
    let n_tile = ((800 * w) as f64 / 3600.0).round().max(16.0) as usize;
    let tile_scale = 32.0 / n_tile as f64;
    let n_ait = (w / 2).max(32) / 2 * 2;
    let ait_scale = 330.0 / n_ait as f64;
    let targets = [
        (
            TILE,
            format!(
                "Galactic centre tile, equatorial TAN (ICRS) centred on Sgr A*: {n_tile} x \
                 {n_tile} px at {tile_scale:.4} deg/px"
            ),
            tan_header(n_tile, tile_scale),
        ),
        (
            ALLSKY,
            format!(
                "all-sky equatorial map, AIT (ICRS): {n_ait} x {} px at {ait_scale:.4} deg/px",
                n_ait / 2
            ),
            ait_header(n_ait, ait_scale),
        ),
    ];
    for (i, (name, what, header)) in targets.iter().enumerate() {
        say(format!("[{}/4] {what}", i + 2));
        let hdr = file(name, "hdr");
        std::fs::write(&hdr, header).map_err(|e| format!("cannot write {}: {e}", hdr.display()))?;
        let job = Job {
            input: input.clone(),
            hdu: 0,
            wcs: None,
            target: hdr.clone(),
            target_hdu: 0,
            output: file(name, "fits"),
            footprint: None,
            png: Some(file(name, "png")),
            order: o.order,
            block_size: None,
            parallel: o.parallel,
            device: (
                reproject::gpu::Backend::Auto,
                reproject::gpu::Devices::First,
            ),
            dtype: OutputType::F32,
            overwrite: true,
            quiet: o.quiet,
            processes: None,
            plan_only: false,
        };
        let r = job::run(&job)?;
        let pixels: usize = r.shape.iter().product();
        let png = r
            .png
            .as_ref()
            .map(|p| (p.width, p.height))
            .unwrap_or((0, 0));
        say(format!(
            "      reprojected ({}) in {:.2} s: {:.1} Mpx/s, {} blocks on {} thread(s); \
             coverage {:.1}%\n      wrote {name}.fits ({}, footprint in HDU 1) and {name}.png \
             ({} x {} px) in {:.2} s",
            o.order,
            r.t_compute.as_secs_f64(),
            pixels as f64 / r.t_compute.as_secs_f64().max(1e-9) / 1e6,
            r.blocks,
            r.threads,
            100.0 * r.coverage,
            size_of(&job.output),
            png.0,
            png.1,
            (r.t_png + r.t_write + r.t_prepare).as_secs_f64()
        ));
    }
    mosaic_step(o, &input, n_tile, tile_scale, &say)?;
    let dir = o.out_dir.display();
    say(format!(
        "\ndone in {:.2} s. Next:\n  reproject-rs info {dir}/{TILE}.fits\n  reproject-rs \
         {dir}/{INPUT}.fits --to {dir}/{TILE}.hdr -o gc_bicubic.fits --order bicubic --png \
         gc_bicubic.png",
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The mosaic exposures: (offset along RA, offset along Dec, in tile widths; rotation in
/// degrees; background level added).
const EXPOSURES: [(f64, f64, f64, f32); 6] = [
    (-0.3, -0.22, 0.0, 0.0),
    (0.0, -0.25, 7.0, 0.8),
    (0.3, -0.2, -5.0, -0.5),
    (-0.28, 0.22, 12.0, 1.5),
    (0.02, 0.25, -9.0, -1.2),
    (0.3, 0.2, 4.0, 0.4),
];

/// Step 4: six overlapping exposures of the Galactic centre (rotated TAN tiles cut from the
/// survey, each with its own background level) combined into the tile's grid with background
/// matching, through the same code as `reproject-rs mosaic`.
fn mosaic_step(
    o: &DemoOptions,
    survey: &Path,
    n_tile: usize,
    tile_scale: f64,
    say: &dyn Fn(String),
) -> CliResult<()> {
    use reproject::engine::{reproject_interp, Options};
    use reproject::io::FitsSource;
    use reproject::mosaic::coadd::{Background, Combine};
    use reproject::wcs::Wcs;
    let n = (n_tile * 5 / 8).max(8);
    say(format!(
        "[4/4] mosaic: {} overlapping exposures of {n} x {n} px (rotated, each with its own \
         background level) into the Galactic centre tile, background-matched",
        EXPOSURES.len()
    ));
    let t = Instant::now();
    let file = |name: &str, ext: &str| o.out_dir.join(format!("{name}.{ext}"));
    let src = FitsSource::open(survey, 0).map_err(|e| format!("{}: {e}", survey.display()))?;
    let wcs_in = Wcs::from_header_str(src.header_text()).map_err(|e| e.to_string())?;
    let extent = n_tile as f64 * tile_scale;
    let mut inputs = Vec::new();
    for (k, &(dx, dy, rot, background)) in EXPOSURES.iter().enumerate() {
        let (s, c) = rot.to_radians().sin_cos();
        let dec = SGR_A.1 + dy * extent;
        let ra = SGR_A.0 + dx * extent / dec.to_radians().cos();
        let header = [
            card("NAXIS", 2, ""),
            card("NAXIS1", n, ""),
            card("NAXIS2", n, ""),
            card_str("CTYPE1", "RA---TAN", ""),
            card_str("CTYPE2", "DEC--TAN", ""),
            card_f64("CRPIX1", (n as f64 + 1.0) / 2.0, ""),
            card_f64("CRPIX2", (n as f64 + 1.0) / 2.0, ""),
            card_f64("CRVAL1", ra, ""),
            card_f64("CRVAL2", dec, ""),
            card_f64("CDELT1", -tile_scale, "deg/pixel"),
            card_f64("CDELT2", tile_scale, "deg/pixel"),
            card_f64("PC1_1", c, ""),
            card_f64("PC1_2", -s, ""),
            card_f64("PC2_1", s, ""),
            card_f64("PC2_2", c, ""),
            card_str("RADESYS", "ICRS", ""),
        ]
        .join("\n");
        let wcs = Wcs::from_header_str(&header).map_err(|e| e.to_string())?;
        let options = Options {
            order: o.order,
            parallel: o.parallel,
            ..Options::default()
        };
        let (data, _) = reproject_interp(&src, &wcs_in, &wcs, &[n, n], &options)
            .map_err(|e| format!("exposure {k}: {e}"))?;
        let path = file(&format!("mosaic_exposure{k}"), "fits");
        let mut out = MappedOutput::create_fits(&path, &[n, n], OutputType::F32, &header, true)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let values = out.data_mut::<f32>().map_err(|e| e.to_string())?;
        for (v, d) in values.iter_mut().zip(data.iter()) {
            *v = *d as f32 + background;
        }
        out.finish()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        inputs.push(path);
    }
    let name = "galactic_centre_mosaic";
    let job = crate::mosaic::MosaicJob {
        inputs,
        weights: Vec::new(),
        hdu: 0,
        target: crate::mosaic::Target::File(file(TILE, "hdr")),
        target_hdu: 0,
        output: file(name, "fits"),
        footprint: None,
        png: Some(file(name, "png")),
        combine: Combine::Mean,
        background: Background::Offset,
        background_reference: Some(0),
        blank: f64::NAN,
        options: Options {
            order: o.order,
            parallel: o.parallel,
            ..Options::default()
        },
        overwrite: true,
        quiet: o.quiet,
        processes: None,
    };
    let summary = crate::mosaic::run(&job)?;
    let levels: Vec<String> = EXPOSURES.iter().map(|e| format!("{:.1}", e.3)).collect();
    say(format!(
        "      {summary}
      (backgrounds added: [{}]; the offsets found, relative to the \
         first exposure, should match them) in {:.2} s",
        levels.join(", "),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// A file's size, readable.
fn size_of(path: &Path) -> String {
    let n = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64;
    if n >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", n / 1024.0)
    }
}

/// Header text (one card per line) of the Galactic centre TAN tile.
fn tan_header(n: usize, scale: f64) -> String {
    let c = (n as f64 + 1.0) / 2.0;
    [
        card("NAXIS", 2, ""),
        card("NAXIS1", n, ""),
        card("NAXIS2", n, ""),
        card_str("CTYPE1", "RA---TAN", ""),
        card_str("CTYPE2", "DEC--TAN", ""),
        card_f64("CRPIX1", c, ""),
        card_f64("CRPIX2", c, ""),
        card_f64("CRVAL1", SGR_A.0, "Sgr A*"),
        card_f64("CRVAL2", SGR_A.1, "Sgr A*"),
        card_f64("CDELT1", -scale, "deg/pixel"),
        card_f64("CDELT2", scale, "deg/pixel"),
        card_str("CUNIT1", "deg", ""),
        card_str("CUNIT2", "deg", ""),
        card_str("RADESYS", "ICRS", ""),
        "END".to_string(),
    ]
    .join("\n")
        + "\n"
}

/// Header text of the all-sky equatorial AIT map (`n` x `n / 2` pixels).
fn ait_header(n: usize, scale: f64) -> String {
    [
        card("NAXIS", 2, ""),
        card("NAXIS1", n, ""),
        card("NAXIS2", n / 2, ""),
        card_str("CTYPE1", "RA---AIT", ""),
        card_str("CTYPE2", "DEC--AIT", ""),
        card_f64("CRPIX1", (n as f64 + 1.0) / 2.0, ""),
        card_f64("CRPIX2", (n as f64 / 2.0 + 1.0) / 2.0, ""),
        card_f64("CRVAL1", 0.0, ""),
        card_f64("CRVAL2", 0.0, ""),
        card_f64("CDELT1", -scale, "deg/pixel"),
        card_f64("CDELT2", scale, "deg/pixel"),
        card_str("CUNIT1", "deg", ""),
        card_str("CUNIT2", "deg", ""),
        card_str("RADESYS", "ICRS", ""),
        "END".to_string(),
    ]
    .join("\n")
        + "\n"
}

// ---------------------------------------------------------------------------------------------
// The synthetic sky.

/// SplitMix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * PI * v).cos()
    }

    /// Log-uniform between `lo` and `hi`.
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.uniform() * (hi.ln() - lo.ln())).exp()
    }
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Ken Perlin's improved gradient noise in 3-D, with a seeded permutation.
struct Perlin {
    perm: [u8; 512],
}

impl Perlin {
    fn new(seed: u64) -> Perlin {
        let mut rng = Rng(seed);
        let mut p: Vec<u8> = (0..=255).collect();
        for i in (1..256).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        let mut perm = [0u8; 512];
        for i in 0..512 {
            perm[i] = p[i & 255];
        }
        Perlin { perm }
    }

    fn noise(&self, x: f64, y: f64, z: f64) -> f64 {
        let (xf, yf, zf) = (x.floor(), y.floor(), z.floor());
        let (xi, yi, zi) = (
            (xf as i64 & 255) as usize,
            (yf as i64 & 255) as usize,
            (zf as i64 & 255) as usize,
        );
        let (x, y, z) = (x - xf, y - yf, z - zf);
        let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
        let (u, v, w) = (fade(x), fade(y), fade(z));
        let p = &self.perm;
        let a = p[xi] as usize + yi;
        let (aa, ab) = (p[a] as usize + zi, p[a + 1] as usize + zi);
        let b = p[xi + 1] as usize + yi;
        let (ba, bb) = (p[b] as usize + zi, p[b + 1] as usize + zi);
        let grad = |h: u8, x: f64, y: f64, z: f64| {
            let h = h & 15;
            let u = if h < 8 { x } else { y };
            let v = if h < 4 {
                y
            } else if h == 12 || h == 14 {
                x
            } else {
                z
            };
            (if h & 1 == 0 { u } else { -u }) + (if h & 2 == 0 { v } else { -v })
        };
        let lerp = |t: f64, a: f64, b: f64| a + t * (b - a);
        lerp(
            w,
            lerp(
                v,
                lerp(u, grad(p[aa], x, y, z), grad(p[ba], x - 1.0, y, z)),
                lerp(
                    u,
                    grad(p[ab], x, y - 1.0, z),
                    grad(p[bb], x - 1.0, y - 1.0, z),
                ),
            ),
            lerp(
                v,
                lerp(
                    u,
                    grad(p[aa + 1], x, y, z - 1.0),
                    grad(p[ba + 1], x - 1.0, y, z - 1.0),
                ),
                lerp(
                    u,
                    grad(p[ab + 1], x, y - 1.0, z - 1.0),
                    grad(p[bb + 1], x - 1.0, y - 1.0, z - 1.0),
                ),
            ),
        )
    }

    /// Fractal sum of `octaves` octaves at base frequency `freq` on the unit vector `v`,
    /// normalised by the total amplitude (values mostly within ±0.5).
    fn fbm(&self, v: [f64; 3], freq: f64, octaves: u32) -> f64 {
        let (mut f, mut amp, mut sum, mut norm) = (freq, 1.0, 0.0, 0.0);
        for o in 0..octaves {
            // Shift each octave so the lattices do not line up.
            let s = 17.31 * o as f64;
            sum += amp * self.noise(v[0] * f + s, v[1] * f - s, v[2] * f + 0.5 * s);
            norm += amp;
            f *= 2.0;
            amp *= 0.5;
        }
        sum / norm
    }

    /// Ridged fractal noise: sharp filaments where the noise crosses zero, in [0, 1].
    fn ridged(&self, v: [f64; 3], freq: f64, octaves: u32) -> f64 {
        let (mut f, mut amp, mut sum, mut norm) = (freq, 1.0, 0.0, 0.0);
        for o in 0..octaves {
            let s = 11.17 * o as f64;
            let n = self.noise(v[0] * f - s, v[1] * f + s, v[2] * f + 0.3 * s);
            sum += amp * (1.0 - 2.0 * n.abs()).max(0.0).powi(2);
            norm += amp;
            f *= 2.0;
            amp *= 0.5;
        }
        sum / norm
    }
}

/// An elliptical Gaussian on the sky.
#[derive(Debug, Clone, Copy)]
struct Blob {
    /// Galactic longitude and latitude, degrees.
    l: f64,
    b: f64,
    /// Peak value.
    amp: f64,
    /// Major and minor sigma, degrees.
    major: f64,
    minor: f64,
    /// Position angle of the major axis, degrees east of north (Galactic).
    pa: f64,
}

/// Unit vector of (lon, lat) in degrees.
fn unit(l: f64, b: f64) -> [f64; 3] {
    let (sl, cl) = l.to_radians().sin_cos();
    let (sb, cb) = b.to_radians().sin_cos();
    [cb * cl, cb * sl, sb]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Longitude wrapped into (-180, 180].
fn wrap(l: f64) -> f64 {
    let l = l.rem_euclid(360.0);
    if l > 180.0 {
        l - 360.0
    } else {
        l
    }
}

/// The synthetic sky on a `w` x `h` Galactic CAR grid.
struct SkyModel {
    w: usize,
    h: usize,
    /// Degrees per pixel (both axes).
    cdelt: f64,
    disk: Perlin,
    cirrus: Perlin,
    filaments: Perlin,
    /// Loop I's centre and the cosines of its shell's outer and inner radii.
    loop_centre: [f64; 3],
    loop_cos: (f64, f64),
    hii: Vec<Blob>,
    points: Vec<Blob>,
    galaxies: Vec<Blob>,
}

impl SkyModel {
    fn new(w: usize, h: usize) -> SkyModel {
        let cdelt = 360.0 / w as f64;
        let mut rng = Rng(20_240_601);
        // HII regions and star-forming clumps along the inner plane.
        let hii = (0..300)
            .map(|_| {
                let major = rng.log_uniform(0.06, 0.6);
                Blob {
                    l: wrap(rng.normal() * 45.0),
                    b: rng.normal() * 0.6,
                    amp: rng.log_uniform(0.1, 2.5),
                    major,
                    minor: major * (0.5 + 0.5 * rng.uniform()),
                    pa: 180.0 * rng.uniform(),
                }
            })
            .collect();
        // Point sources: half isotropic (extragalactic), half in the disk; the beam is 2.5
        // pixels FWHM.
        let sigma = 2.5 * cdelt / 2.354_820_045;
        let n = ((3000 * w) as f64 / 3600.0).round().max(200.0) as usize;
        let points = (0..n)
            .map(|i| {
                let l = 360.0 * rng.uniform();
                let b = if i % 2 == 0 {
                    (2.0 * rng.uniform() - 1.0).asin().to_degrees()
                } else {
                    let s = if rng.uniform() < 0.5 { -1.0 } else { 1.0 };
                    s * -2.0 * rng.uniform().max(1e-12).ln()
                };
                let amp = (0.03 * rng.uniform().max(1e-12).powf(-1.0 / 1.2)).min(60.0);
                Blob {
                    l,
                    b,
                    amp,
                    major: sigma,
                    minor: sigma,
                    pa: 0.0,
                }
            })
            .collect();
        let galaxies = vec![
            // LMC: disk and bar.
            Blob {
                l: 280.47,
                b: -32.89,
                amp: 0.35,
                major: 2.6,
                minor: 2.1,
                pa: 20.0,
            },
            Blob {
                l: 280.2,
                b: -33.3,
                amp: 0.6,
                major: 1.2,
                minor: 0.35,
                pa: 110.0,
            },
            // 30 Doradus.
            Blob {
                l: 279.47,
                b: -31.67,
                amp: 3.0,
                major: 0.15,
                minor: 0.15,
                pa: 0.0,
            },
            // SMC.
            Blob {
                l: 302.8,
                b: -44.3,
                amp: 0.4,
                major: 1.1,
                minor: 0.55,
                pa: 45.0,
            },
            // M31.
            Blob {
                l: 121.17,
                b: -21.57,
                amp: 1.2,
                major: 0.7,
                minor: 0.18,
                pa: 128.0,
            },
        ];
        SkyModel {
            w,
            h,
            cdelt,
            disk: Perlin::new(1),
            cirrus: Perlin::new(2),
            filaments: Perlin::new(3),
            loop_centre: unit(329.0, 17.5),
            loop_cos: (78.0f64.to_radians().cos(), 38.0f64.to_radians().cos()),
            hii,
            points,
            galaxies,
        }
    }

    /// Galactic longitude of column `x` and latitude of row `y` (pixel centres).
    fn lon(&self, x: usize) -> f64 {
        -(x as f64 - (self.w as f64 / 2.0 - 0.5)) * self.cdelt
    }

    fn lat(&self, y: usize) -> f64 {
        (y as f64 - (self.h as f64 / 2.0 - 0.5)) * self.cdelt
    }

    /// The FITS header text of the survey.
    fn header(&self) -> String {
        let mut cards = vec![
            card_str("CTYPE1", "GLON-CAR", "Galactic longitude, plate carree"),
            card_str("CTYPE2", "GLAT-CAR", "Galactic latitude, plate carree"),
            card_f64("CRPIX1", self.w as f64 / 2.0 + 0.5, ""),
            card_f64("CRPIX2", self.h as f64 / 2.0 + 0.5, ""),
            card_f64("CRVAL1", 0.0, ""),
            card_f64("CRVAL2", 0.0, ""),
            card_f64("CDELT1", -self.cdelt, "deg/pixel"),
            card_f64("CDELT2", self.cdelt, "deg/pixel"),
            card_str("CUNIT1", "deg", ""),
            card_str("CUNIT2", "deg", ""),
            card_str("BUNIT", "MJy/sr", ""),
            card_str("OBJECT", "synthetic Galactic survey", ""),
            card_str("ORIGIN", "reproject-rs demo", ""),
        ];
        cards.extend(history(
            "Synthetic sky made by `reproject-rs demo` (deterministic): clumpy Galactic disk, \
             bulge, cirrus, Loop I, HII regions, point sources (2.5 px FWHM beam), LMC, SMC, \
             M31, white noise.",
        ));
        cards.join("\n")
    }

    /// The noise fields at (l, b): disk clumps, cirrus amplitude and cirrus filaments.
    fn noise(&self, v: [f64; 3]) -> [f32; 3] {
        [
            self.disk.fbm(v, 9.0, 7) as f32,
            self.cirrus.fbm(v, 2.5, 5) as f32,
            self.filaments.ridged(v, 4.0, 6) as f32,
        ]
    }

    /// The diffuse emission at (l, b) in degrees, given the noise fields there.
    fn diffuse(&self, l: f64, b: f64, v: [f64; 3], noise: [f64; 3]) -> f64 {
        let lw = wrap(l);
        let g = |x: f64, s: f64| (-0.5 * (x / s) * (x / s)).exp();
        // Thin disk, flaring outwards, brighter towards the inner Galaxy, the molecular ring,
        // Cygnus X and Carina; lognormal clumps.
        let h = 0.8 + 1.4 * lw.abs() / 180.0;
        let amp = 0.25
            + 1.3 * g(lw, 20.0)
            + 0.5 * g(lw.abs() - 30.0, 9.0)
            + 0.9 * g(lw - 79.0, 4.0)
            + 0.5 * g(lw + 72.5, 4.0);
        let profile = (-b.abs() / h).exp() + 0.15 * (-b.abs() / (5.0 * h)).exp();
        let mut value = amp * profile * (3.4 * noise[0] - 0.3).exp();
        // Boxy bulge.
        value += 0.45 * (-((lw / 9.0).powi(4) + (b / 6.0).powi(4)).sqrt()).exp();
        // Cirrus everywhere: large-scale amplitude times ridged filaments.
        value += 0.04
            * (0.35 + (-b.abs() / 15.0).exp())
            * (2.0 * noise[1]).exp()
            * (0.35 + 1.6 * noise[2].powi(3));
        // Loop I (North Polar Spur): a shell of 58 deg radius around (l, b) = (329, 17.5),
        // bright in the north.
        let c = dot(v, self.loop_centre);
        if c > self.loop_cos.0 && c < self.loop_cos.1 {
            let d = c.clamp(-1.0, 1.0).acos().to_degrees();
            let fade = if b > 0.0 { 1.0 } else { 0.15 };
            value += 0.035 * g(d - 58.0, 3.5) * fade * (0.6 + 2.0 * noise[2]);
        }
        value
    }

    /// Fills `data` (rows of `w`, row 0 at b = -90) with the sky.
    fn render(&self, data: &mut [f32]) {
        let (w, h) = (self.w, self.h);
        // The noise fields on every second pixel (their finest structure spans several
        // pixels), interpolated bilinearly in between; column w/2 is column 0 again.
        let (cw, ch) = (w / 2 + 1, (h - 1) / 2 + 2);
        let mut coarse = vec![[0f32; 3]; cw * ch];
        coarse.par_chunks_mut(cw).enumerate().for_each(|(cy, row)| {
            let b = self.lat(2 * cy);
            for (cx, out) in row.iter_mut().enumerate() {
                *out = self.noise(unit(self.lon(2 * cx), b));
            }
        });
        let lon_sc: Vec<(f64, f64)> = (0..w).map(|x| self.lon(x).to_radians().sin_cos()).collect();
        data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let b = self.lat(y);
            let (sin_b, cos_b) = b.to_radians().sin_cos();
            let (cy, fy) = (y / 2, (y % 2) as f32 * 0.5);
            for (x, out) in row.iter_mut().enumerate() {
                let l = self.lon(x);
                let (sl, cl) = lon_sc[x];
                let v = [cos_b * cl, cos_b * sl, sin_b];
                let (cx, fx) = (x / 2, (x % 2) as f32 * 0.5);
                let at = |i: usize, j: usize| coarse[j * cw + i];
                let (a, bb, c, d) = (
                    at(cx, cy),
                    at(cx + 1, cy),
                    at(cx, cy + 1),
                    at(cx + 1, cy + 1),
                );
                let noise = std::array::from_fn(|k| {
                    let top = a[k] + fx * (bb[k] - a[k]);
                    let bottom = c[k] + fx * (d[k] - c[k]);
                    f64::from(top + fy * (bottom - top))
                });
                // White noise from a hash of the pixel index (independent of threading): the
                // sum of four uniform bytes, nearly Gaussian.
                let r = mix((y * w + x) as u64 ^ 0x5EED);
                let sum: u32 = (0..4).map(|k| (r >> (16 * k)) as u32 & 0xFFFF).sum();
                let gauss = (sum as f64 / 65535.0 - 2.0) * 3f64.sqrt();
                *out = (self.diffuse(l, b, v, noise) + 0.004 * gauss) as f32;
            }
        });
        for blob in self.hii.iter().chain(&self.galaxies).chain(&self.points) {
            self.add(data, blob);
        }
    }

    /// Adds an elliptical Gaussian to `data`, over the pixels within 5 sigma.
    fn add(&self, data: &mut [f32], blob: &Blob) {
        let (w, h) = (self.w, self.h);
        let p0 = unit(blob.l, blob.b);
        let (sl, cl) = blob.l.to_radians().sin_cos();
        let (sb, cb) = blob.b.to_radians().sin_cos();
        let east = [-sl, cl, 0.0];
        let north = [-sb * cl, -sb * sl, cb];
        let (spa, cpa) = blob.pa.to_radians().sin_cos();
        let (sa, sm) = (blob.major.to_radians(), blob.minor.to_radians());
        let reach = 5.0 * blob.major;
        let y0 = blob.b / self.cdelt + (h as f64 / 2.0 - 0.5);
        let x0 = -wrap(blob.l) / self.cdelt + (w as f64 / 2.0 - 0.5);
        let dy = (reach / self.cdelt).ceil() as i64 + 1;
        let y_lo = (y0.round() as i64 - dy).max(0);
        let y_hi = (y0.round() as i64 + dy).min(h as i64 - 1);
        for y in y_lo..=y_hi {
            let b = self.lat(y as usize);
            let cos_b = b.to_radians().cos().max(1e-9);
            let dx = ((reach / (self.cdelt * cos_b)).ceil() as i64 + 1).min(w as i64 / 2);
            for xi in (x0.round() as i64 - dx)..=(x0.round() as i64 + dx) {
                let x = xi.rem_euclid(w as i64) as usize;
                let v = unit(self.lon(x), b);
                if dot(v, p0) <= 0.0 {
                    continue;
                }
                let (xi_, eta) = (dot(v, east), dot(v, north));
                let along = xi_ * spa + eta * cpa;
                let across = xi_ * cpa - eta * spa;
                let e = 0.5 * ((along / sa).powi(2) + (across / sm).powi(2));
                if e < 12.5 {
                    data[y as usize * w + x] += (blob.amp * (-e).exp()) as f32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sky_is_deterministic_and_structured() {
        let sky = SkyModel::new(128, 64);
        let mut a = vec![0f32; 128 * 64];
        let mut b = vec![0f32; 128 * 64];
        sky.render(&mut a);
        Parallel::Serial.install(|| sky.render(&mut b)).unwrap();
        assert_eq!(a, b);
        // The plane (middle rows) is brighter than the poles.
        let row_mean = |y: usize| a[y * 128..(y + 1) * 128].iter().sum::<f32>() / 128.0;
        assert!(row_mean(32) > 5.0 * row_mean(2));
        assert!(a.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn headers_parse() {
        let tan = reproject::wcs::Wcs::from_header_str(&tan_header(100, 0.256)).unwrap();
        let (ra, dec) = tan.pixel_to_world(49.5, 49.5).unwrap();
        assert!((ra - SGR_A.0).abs() < 1e-9 && (dec - SGR_A.1).abs() < 1e-9);
        let ait = reproject::wcs::Wcs::from_header_str(&ait_header(200, 1.65)).unwrap();
        assert!(ait.pixel_to_world(99.5, 49.5).is_some());
        assert!(ait.pixel_to_world(0.0, 0.0).is_none());
    }
}
