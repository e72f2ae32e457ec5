//! OVAL's closed vocabularies as values: a test's two counts (`check_existence`, and `check` or
//! a state entity's `var_check`), read where the host's definitions are read; and what the
//! probes say of an object and of each item (`flag`, `status`), read at the edge from the
//! guest's results, where a word the schema does not have is refused. Each serializes as the
//! schema's own word, so stored evidence and plans read the same.
use serde::{Deserialize, Serialize};

macro_rules! vocab {
    ($(#[$m:meta])* pub enum $name:ident ($attr:literal) { $($(#[$vm:meta])* $var:ident = $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $var,)*
        }

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$var,)*];

            /// The schema's word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$var => $s,)*
                }
            }

            /// The attribute's value, or an error that names the attribute and the value.
            pub fn read(word: &str) -> Result<Self, String> {
                Self::ALL.iter().copied().find(|v| v.as_str() == word).ok_or_else(|| format!("{} {word:?}", $attr))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocab! {
    /// A test's `check_existence`: how many of its object's items must exist.
    #[derive(Default)]
    pub enum Existence ("check_existence") {
        AllExist = "all_exist",
        AnyExist = "any_exist",
        /// The schema's default.
        #[default]
        AtLeastOneExists = "at_least_one_exists",
        NoneExist = "none_exist",
        OnlyOneExists = "only_one_exists",
    }
}

vocab! {
    /// A test's `check`, or a state entity's `var_check`: how many of the items (or of a
    /// variable's values) must match.
    #[derive(Default)]
    pub enum Check ("check") {
        /// The schema's default for `var_check`.
        #[default]
        All = "all",
        AtLeastOne = "at least one",
        OnlyOne = "only one",
        NoneSatisfy = "none satisfy",
    }
}

vocab! {
    /// A collected object's `flag`: how its collection went.
    pub enum Flag ("flag") {
        Error = "error",
        Complete = "complete",
        Incomplete = "incomplete",
        DoesNotExist = "does not exist",
        NotCollected = "not collected",
        NotApplicable = "not applicable",
    }
}

vocab! {
    /// An item's `status`.
    #[derive(Default)]
    pub enum ItemStatus ("status") {
        Error = "error",
        /// The schema's default.
        #[default]
        Exists = "exists",
        DoesNotExist = "does not exist",
        NotCollected = "not collected",
    }
}

impl Existence {
    /// The attribute as a test gives it; none is the schema's default.
    pub fn of(attr: Option<&str>) -> Result<Self, String> {
        attr.map_or(Ok(Self::default()), Self::read)
    }

    /// Whether `n` items, each of them existing, meet it (`all_exist` asks no more of them than
    /// `at_least_one_exists` does).
    pub fn holds(self, n: usize) -> bool {
        match self {
            Self::AllExist | Self::AtLeastOneExists => n >= 1,
            Self::AnyExist => true,
            Self::NoneExist => n == 0,
            Self::OnlyOneExists => n == 1,
        }
    }
}

impl Flag {
    /// What a probe that read an object whole and found `n` items of it says of it.
    pub fn found(n: usize) -> Self {
        if n == 0 { Self::DoesNotExist } else { Self::Complete }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T>(all: &[T], read: fn(&str) -> Result<T, String>)
    where
        T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display + Serialize + serde::de::DeserializeOwned,
    {
        for &v in all {
            assert_eq!(read(&v.to_string()), Ok(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
            assert_eq!(serde_json::from_str::<T>(&format!("\"{v}\"")).unwrap(), v);
        }
    }

    /// Each value reads back from the schema's word, in serde as in the attribute; any other
    /// word is refused by name.
    #[test]
    fn each_value_reads_back_from_the_word_oval_gives_it() {
        round_trips(Existence::ALL, Existence::read);
        round_trips(Check::ALL, Check::read);
        round_trips(Flag::ALL, Flag::read);
        round_trips(ItemStatus::ALL, ItemStatus::read);
        assert_eq!(Existence::of(None), Ok(Existence::AtLeastOneExists));
        assert_eq!(Existence::of(Some("")), Err("check_existence \"\"".into()));
        assert_eq!(Check::read("none exist"), Err("check \"none exist\"".into()));
        assert_eq!(Flag::read("complete\n```"), Err("flag \"complete\\n```\"".into()));
        assert!(serde_json::from_str::<ItemStatus>("\"present\"").is_err());
    }

    #[test]
    fn existence_counts_the_items_as_the_schema_says() {
        let holds = |e: Existence| [0, 1, 2].map(|n| e.holds(n));
        assert_eq!(holds(Existence::AllExist), [false, true, true]);
        assert_eq!(holds(Existence::AtLeastOneExists), [false, true, true]);
        assert_eq!(holds(Existence::AnyExist), [true, true, true]);
        assert_eq!(holds(Existence::NoneExist), [true, false, false]);
        assert_eq!(holds(Existence::OnlyOneExists), [false, true, false]);
        assert_eq!([Flag::found(0), Flag::found(2)], [Flag::DoesNotExist, Flag::Complete]);
    }
}
