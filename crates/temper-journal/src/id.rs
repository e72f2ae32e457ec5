//! The journal's ids as types: a run's, an attempt's, an event's, a turn's and a memory item's
//! cannot be swapped, nor taken for a count. Each is a positive number (the store numbers its
//! rows from 1), read and written as that number: in the store, in JSON, on the command line.
//! "None" is `Option`, never 0.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A number that is no id: 0 or below.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{0} is not a number")]
    NotANumber(String),
    #[error("{0} is not positive: ids and attempt numbers count from 1")]
    NotPositive(i64),
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "i64", into = "i64")]
        pub struct $name(i64);

        impl $name {
            /// `None` for 0 or below.
            pub const fn new(n: i64) -> Option<Self> {
                if n > 0 { Some(Self(n)) } else { None }
            }
            /// Its number, where one is written (a bind, a name, a line).
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl TryFrom<i64> for $name {
            type Error = IdError;
            fn try_from(n: i64) -> Result<Self, IdError> {
                Self::new(n).ok_or(IdError::NotPositive(n))
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                s.parse::<i64>().map_err(|_| IdError::NotANumber(s.to_string())).and_then(Self::try_from)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<DB: sqlx::Database> sqlx::Type<DB> for $name
        where
            i64: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <i64 as sqlx::Type<DB>>::type_info()
            }
            fn compatible(ty: &DB::TypeInfo) -> bool {
                <i64 as sqlx::Type<DB>>::compatible(ty)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
        where
            i64: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(&self, buf: &mut DB::ArgumentBuffer) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <i64 as sqlx::Encode<'q, DB>>::encode_by_ref(&self.0, buf)
            }
            fn produces(&self) -> Option<DB::TypeInfo> {
                <i64 as sqlx::Encode<'q, DB>>::produces(&self.0)
            }
            fn size_hint(&self) -> usize {
                <i64 as sqlx::Encode<'q, DB>>::size_hint(&self.0)
            }
        }

        /// A row's number that is no id (0 or below) is a decoding error, not an id.
        #[cfg(feature = "sqlx")]
        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $name
        where
            i64: sqlx::Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok(Self::try_from(<i64 as sqlx::Decode<'r, DB>>::decode(value)?)?)
            }
        }
    };
}

id_type!(
    /// A run's id.
    RunId
);
id_type!(
    /// An attempt's id, unique across the store's runs.
    AttemptId
);
id_type!(
    /// An attempt's number on its rule in its run: 1 for the first try, then 2, 3...
    AttemptNo
);
id_type!(
    /// An event's id, unique across the store's runs and growing: a reader asks for the events
    /// after the last one it saw.
    EventId
);
id_type!(
    /// An LLM call's id (a turn).
    TurnId
);
id_type!(
    /// A memory item's id within its kind's table (a lesson, ban, tip or remembered fix): with
    /// its [`MemoryKind`](crate::MemoryKind) it names one item.
    MemoryId
);

impl AttemptNo {
    /// A rule's first try.
    pub const FIRST: Self = Self(1);

    /// The number of the try after `tries` tries on the rule: 1 after none.
    pub const fn after(tries: i64) -> Self {
        Self(if tries > 0 { tries.saturating_add(1) } else { 1 })
    }
}

/// Serde for an optional id written as its number, 0 for none: the shape older records have
/// (`Booted::through` before any attempt, a summary that names no run).
pub mod zero_is_none {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<T: Copy + Into<i64>, S: Serializer>(id: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(id.map_or(0, Into::into))
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
    where
        T: TryFrom<i64, Error = super::IdError>,
        D: Deserializer<'de>,
    {
        match i64::deserialize(d)? {
            0 => Ok(None),
            n => T::try_from(n).map(Some).map_err(D::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: i64) -> RunId {
        RunId::new(n).unwrap()
    }

    #[test]
    fn ids_read_and_print_as_their_number() {
        let id: RunId = "42".parse().unwrap();
        assert_eq!(id, run(42));
        assert_eq!(id.get(), 42);
        assert_eq!(id.to_string(), "42");
        let attempt = AttemptId::new(7).unwrap();
        assert_eq!(serde_json::to_string(&attempt).unwrap(), "7");
        assert_eq!(serde_json::from_str::<AttemptId>("7").unwrap(), attempt);
        assert_eq!(serde_json::to_string(&[EventId::new(3), None]).unwrap(), "[3,null]");
    }

    #[test]
    fn no_id_is_zero_or_below() {
        assert_eq!(RunId::new(0), None);
        assert_eq!(RunId::new(-3), None);
        assert_eq!(AttemptNo::try_from(0), Err(IdError::NotPositive(0)));
        assert_eq!(MemoryId::try_from(-1), Err(IdError::NotPositive(-1)));
        assert!(serde_json::from_str::<EventId>("0").is_err(), "JSON cannot make one either");
        assert!(serde_json::from_str::<TurnId>("-2").is_err());
    }

    #[test]
    fn parsing_says_what_is_wrong() {
        assert_eq!("x".parse::<RunId>(), Err(IdError::NotANumber("x".into())));
        assert_eq!("".parse::<AttemptNo>(), Err(IdError::NotANumber(String::new())));
        assert_eq!("1.5".parse::<MemoryId>(), Err(IdError::NotANumber("1.5".into())));
        assert_eq!("0".parse::<RunId>(), Err(IdError::NotPositive(0)));
        assert_eq!("-4".parse::<EventId>(), Err(IdError::NotPositive(-4)));
        assert_eq!("12".parse::<MemoryId>().map(MemoryId::get), Ok(12));
    }

    #[test]
    fn the_next_try_counts_from_one() {
        assert_eq!(AttemptNo::after(0), AttemptNo::FIRST);
        assert_eq!(AttemptNo::FIRST.get(), 1);
        assert_eq!(AttemptNo::after(-5).get(), 1);
        assert_eq!(AttemptNo::after(2).get(), 3);
        assert_eq!(AttemptNo::after(i64::MAX).get(), i64::MAX);
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "zero_is_none")]
        through: Option<AttemptId>,
    }

    #[test]
    fn zero_is_none_keeps_the_old_shape() {
        assert_eq!(serde_json::to_string(&Holder { through: None }).unwrap(), r#"{"through":0}"#);
        assert_eq!(serde_json::to_string(&Holder { through: AttemptId::new(9) }).unwrap(), r#"{"through":9}"#);
        assert_eq!(serde_json::from_str::<Holder>(r#"{"through":0}"#).unwrap(), Holder { through: None });
        assert_eq!(serde_json::from_str::<Holder>(r#"{"through":9}"#).unwrap(), Holder { through: AttemptId::new(9) });
        assert!(serde_json::from_str::<Holder>(r#"{"through":-1}"#).is_err());
    }

    #[test]
    fn the_records_that_may_name_no_id_keep_their_shape() {
        let baseline = r#"{"snapshot":"base","through":0}"#;
        let b: crate::Booted = serde_json::from_str(baseline).unwrap();
        assert_eq!(b.through, None, "the baseline holds no attempt's fix");
        assert_eq!(serde_json::to_string(&b).unwrap(), baseline);
        let summary = serde_json::to_value(crate::RunSummary::default()).unwrap();
        assert_eq!(summary["run"], 0, "a summary made without its run");
        let summary: crate::RunSummary = serde_json::from_str(r#"{"run":12}"#).unwrap();
        assert_eq!(summary.run, RunId::new(12));
    }
}
