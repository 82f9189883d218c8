//! Closed sets of kinds named on the wire (an error's `kind`, a problem's `kind`).
//!
//! `wire_kinds!` writes the enum, its `ALL` list, its wire name and its serde from one
//! list of `Variant => "wire-name"` lines, so a new kind is listed, named and answered
//! with in one place, and `clone-army schema` (which reads `ALL`) cannot miss it.

/// Declares `pub enum $name` with one variant per `Variant => "wire-name"` line, and:
/// `ALL` (every kind, in the order written), `as_str` (its wire name), `Display` (the
/// same), serde as that string, and equality with a `&str` (a kind read back from the
/// wire, as tests read it).
macro_rules! wire_kinds {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$variant_meta])* #[doc = concat!("`", $wire, "`")] $variant, )+
        }

        impl $name {
            /// Every kind, in the order the schema lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The kind's name on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $wire, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                $name::ALL
                    .iter()
                    .copied()
                    .find(|kind| kind.as_str() == text)
                    .ok_or_else(|| {
                        let names: Vec<&str> = $name::ALL.iter().map(|kind| kind.as_str()).collect();
                        serde::de::Error::custom(format!(
                            "unknown {} {text:?}, expected one of: {}",
                            stringify!($name),
                            names.join(", ")
                        ))
                    })
            }
        }
    };
}

pub(crate) use wire_kinds;

#[cfg(test)]
mod tests {
    wire_kinds! {
        /// A set to test the macro on.
        pub enum Sample {
            First => "first",
            SecondOne => "second-one",
        }
    }

    #[test]
    fn all_lists_every_kind_in_order_with_its_wire_name() {
        let names: Vec<&str> = Sample::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(names, ["first", "second-one"]);
        assert_eq!(Sample::SecondOne.to_string(), "second-one");
        assert_eq!(Sample::First, "first");
    }

    #[test]
    fn serde_reads_and_writes_the_wire_name() {
        assert_eq!(
            serde_json::to_string(&Sample::ALL).unwrap(),
            r#"["first","second-one"]"#
        );
        let read: Sample = serde_json::from_str(r#""second-one""#).unwrap();
        assert_eq!(read, Sample::SecondOne);
    }

    #[test]
    fn an_unknown_kind_is_refused_naming_the_allowed_ones() {
        let error = serde_json::from_str::<Sample>(r#""third""#).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("expected one of: first, second-one"),
            "{error}"
        );
    }
}
