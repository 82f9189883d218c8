# frozen_string_literal: true

require 'pathname'
require_relative 'task_io'

module PuppetX
  module CloneArmy
    # The recorder's directory, as the report task trusts it: the one
    # directory whose timelines it reads (`from`) and where it writes pages
    # (`output`). A task runs as root, and under PE's RBAC someone allowed only
    # the report task must not choose where root reads or writes, so the
    # directory comes from a file class clone_army writes, never from a
    # parameter, and only a plain file name in it is taken from the caller.
    #
    # The helper holds every file there to its own rules as well (no symlink,
    # a regular file only, bounded reads, a page only over a page); this keeps
    # the caller in the directory the class chose.
    module RecordDir
      # Where class clone_army names the directory of its `record_file`.
      FILE = '/etc/puppet-clone-army/record_dir'
      # The test hook that points the task at another such file; like the
      # task's helper hook, an environment variable, which a task caller
      # cannot set.
      TEST_ENV = 'CLONE_ARMY_TASK_RECORD_DIR_FILE'
      # What FILE may hold (comment lines aside): an absolute path of plain
      # parts, as the directory of a Clone_army::Timeline_path is.
      PATTERN = %r{\A(?!.*/\.\.?(/|\z))(/[A-Za-z0-9._@+-]+)+\z}.freeze
      # A timeline's or a page's name in the directory: no slash, and no
      # leading dot (so never `.`, `..`, or the helper's hidden temporary files).
      NAME = %r{\A[A-Za-z0-9_@+-][A-Za-z0-9._@+-]{0,254}\z}.freeze
      # The end of every page's name.
      PAGE_SUFFIX = '.html'
      # More than FILE ever holds.
      MAX_FILE_BYTES = 4096

      module_function

      # The directory FILE names, once FILE, its directory and the directory
      # named are found to be root's; else a refusal of `from` saying what to fix.
      def path
        file = ENV.fetch(TEST_ENV, FILE)
        dir = parse(file, trusted_text(file))
        check_dir(dir)
        dir
      end

      # `value` as a path in `dir`: a plain NAME, alone or after `dir/`, ending
      # in `suffix` when one is given; what is there already must be a regular
      # file. Anything else is refused naming `key`.
      def entry(value, key, dir, suffix = nil)
        name = name_of(value, dir)
        unless name.is_a?(String) && name.match?(NAME) && name.end_with?(suffix.to_s)
          what = suffix ? "a file name ending in #{suffix}" : 'a file name'
          raise TaskIO::ParameterError.new(key, "#{key} must be #{what} in the recorder's directory #{dir} (letters, digits " \
                                                "and . _ @ + -, not starting with a dot), alone or after #{dir}/; got #{value.inspect}")
        end
        regular_or_missing(File.join(dir, name), key)
      end

      # The name `value` gives in `dir`: itself without a slash, its last part
      # when it is exactly `dir/name`; else nil.
      def name_of(value, dir)
        return nil unless value.is_a?(String)
        return value unless value.include?('/')

        name = File.basename(value)
        name if value == File.join(dir, name)
      end

      def regular_or_missing(path, key)
        kind = File.lstat(path).ftype
        return path if kind == 'file'

        raise TaskIO::ParameterError.new(key, "#{key} #{path} is a #{kind}: only a regular file there is read or replaced")
      rescue Errno::ENOENT
        path
      end

      # The text of `file`, at most MAX_FILE_BYTES, once it and its directory
      # are root's own.
      def trusted_text(file)
        [File.dirname(file), file].each { |path| check_root_only(path) }
        File.open(file, File::RDONLY | File::NOFOLLOW) { |f| f.read(MAX_FILE_BYTES) }.to_s
      rescue Errno::ENOENT
        raise error("#{file} does not exist: apply class clone_army, which names the recorder's directory there")
      rescue SystemCallError => e
        raise error("#{file} cannot be read: #{e.message}")
      end

      # A real file or directory (no symlink), owned by root, writable by no one else.
      def check_root_only(path)
        stat = File.lstat(path)
        return if (stat.directory? || stat.file?) && owned_by_us?(stat) && (stat.mode & 0o022).zero?

        raise error("#{path} is not root's own (it is a symlink, another user's, or writable by others)")
      end

      # The one directory `text` names (comment lines aside).
      def parse(file, text)
        lines = text.lines.map(&:strip).reject { |line| line.empty? || line.start_with?('#') }
        return lines.first if lines.size == 1 && lines.first.match?(PATTERN)

        raise error("#{file} does not name one directory (an absolute path of letters, digits and . _ @ + -)")
      end

      # `dir` and every directory above it: real directories (its path holds
      # no symlink), `dir` root's, none writable by every user unless sticky.
      def check_dir(dir)
        raise error("#{dir} is reached through a symlink") unless File.realpath(dir) == dir
        raise error("#{dir} is not root's own directory") unless owned_by_us?(File.lstat(dir))

        Pathname.new(dir).ascend do |path|
          stat = File.lstat(path)
          raise error("#{path} is writable by every user") if (stat.mode & 0o002).nonzero? && !stat.sticky?
        end
      rescue Errno::ENOENT
        raise error("#{dir} does not exist (class clone_army makes it with record => true)")
      end

      # Root, or whoever runs the task (root, but for the specs).
      def owned_by_us?(stat)
        [0, Process.euid].include?(stat.uid)
      end

      def error(why)
        TaskIO::ParameterError.new('from', "from and output must be in the recorder's directory, which is not known: #{why}",
                                   kind: 'record-dir-unknown')
      end
    end
  end
end
