//! The load host itself: its OS ([`os`]), the kernel limits a fleet needs and its
//! capacity ([`limits`]), the system bus's limits ([`bus`]) and SELinux ([`selinux`]).

pub mod bus;
pub mod limits;
pub mod os;
pub mod selinux;
