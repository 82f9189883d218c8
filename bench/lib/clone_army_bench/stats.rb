# frozen_string_literal: true

module CloneArmyBench
  # The bench's statistics, one definition each. A figure from repeated runs is a
  # median quoted with every run it came from; a tail (p95) only exists with
  # enough values to have one; a trend is a fitted slope, not two end points.
  module Stats
    # Fewer runs than this make a median no better than one run picked at will.
    MIN_MEDIAN_RUNS = 3
    # A 95th percentile of fewer values is the maximum under another name.
    MIN_P95_VALUES = 20

    module_function

    # The median (the mean of the middle two for an even count) of at least
    # `min` numbers.
    def median(values, min: MIN_MEDIAN_RUNS)
      nums = numbers(values)
      raise ArgumentError, "a median needs at least #{min} runs, got #{nums.size}" if nums.size < min

      sorted = nums.sort
      mid = sorted.size / 2
      sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
    end

    # The 95th percentile (nearest rank), or nil below MIN_P95_VALUES values.
    def p95(values)
      sorted = numbers(values).sort
      return nil if sorted.size < MIN_P95_VALUES

      sorted[(0.95 * sorted.size).ceil - 1]
    end

    # The least-squares slope of ys over xs, or nil when it is not defined
    # (fewer than two points, or every x the same).
    def slope(xvals, yvals)
      fit = line(xvals, yvals)
      fit && fit[1]
    end

    # The least-squares line through the points: [intercept, slope], or nil when
    # it is not defined (fewer than two points, or every x the same).
    def line(xvals, yvals)
      xs = numbers(xvals)
      ys = numbers(yvals)
      raise ArgumentError, "#{xs.size} xs but #{ys.size} ys" if xs.size != ys.size
      return nil if xs.size < 2

      mx = xs.sum / xs.size
      my = ys.sum / ys.size
      sxx = xs.sum { |x| (x - mx)**2 }
      return nil if sxx.zero?

      slope = xs.zip(ys).sum { |x, y| (x - mx) * (y - my) } / sxx
      [my - (slope * mx), slope]
    end

    # The fitted line's highest value over the xs (at one end or the other):
    # what a trend says of the worst point, without one noisy reading deciding.
    def fitted_max(xvals, yvals)
      intercept, slope = line(xvals, yvals)
      return nil if slope.nil?

      numbers(xvals).map { |x| intercept + (slope * x) }.max
    end

    # The runs behind a median, as the note quotes them: "min A, max B; runs: ..."
    # in the order they ran, each as it was measured.
    def quote(runs)
      sorted = runs.sort_by { |r| Float(r) }
      text = "min #{sorted.first}, max #{sorted.last}; runs: #{runs.join(' ')}"
      tail = p95(runs)
      tail ? "#{text}; p95 #{tail}" : text
    end

    # A ratio with both of its sides, so the reader sees what moved.
    def ratio(numerator, denominator, names)
      value = Float(numerator) / Float(denominator)
      [value, "#{names[0]} #{numerator} / #{names[1]} #{denominator}"]
    end

    # The most values inside any window of `width` (a half-open span from one
    # value): the busiest stretch of a run of start times.
    def busiest(values, width)
      sorted = numbers(values).sort
      best = 0
      first = 0
      sorted.each_with_index do |v, i|
        first += 1 while v - sorted[first] >= width
        best = [best, i - first + 1].max
      end
      best
    end

    # A target a value can be held to on its own: a comparison and a number.
    THRESHOLD = %r{\A(≤|<|≥|>) ([0-9.]+)\z}.freeze

    # Whether value meets a threshold target ("≤ 0.3", "≥ 99"); nil for a target
    # that is not one (a dash, words) or for no value.
    def meets(value, target)
      m = THRESHOLD.match(target.to_s)
      return nil if m.nil? || value.nil?

      limit = Float(m[2])
      { '≤' => value <= limit, '<' => value < limit, '≥' => value >= limit, '>' => value > limit }.fetch(m[1])
    end

    # Rounds as the bench prints: to `places` decimals.
    def fixed(value, places = 3)
      format("%.#{places}f", value)
    end

    def numbers(values)
      values.map { |v| Float(v) }
    end
  end
end
