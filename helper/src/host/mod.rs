//! The load host itself: its OS ([`os`]), the kernel limits a fleet needs and its
//! capacity ([`limits`]), the system bus's limits ([`bus`]), SELinux ([`selinux`]), and
//! where the helper's man page and shell completions go ([`docs`]).

pub mod bus;
pub mod docs;
pub mod limits;
pub mod os;
pub mod selinux;
