//! Byte sizes on the command line: `64MiB`, `1GiB`, `500kB`, `1048576`.

/// Parses a size with an optional binary (KiB, MiB, GiB) or decimal (kB, MB, GB) unit;
/// the error text is what clap shows after "invalid value".
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (try 64MiB, 1GiB or a number of bytes)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        other => {
            return Err(format!(
                "unknown size unit {other:?} (use KiB, MiB, GiB, kB, MB or GB)"
            ))
        }
    };
    let bytes = number * scale;
    if !(1.0..=(1u64 << 50) as f64).contains(&bytes) {
        return Err(format!("{text:?} is out of range (1 byte to 1 PiB)"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("500kB"), Ok(500_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("0").is_err());
    }
}
